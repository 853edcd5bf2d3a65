import { expect } from 'chai'
import { canonicalUuid, isUuid, uuidv7 } from '../../../core/capture/uuid.ts'

describe('isUuid', () => {
  it('accepts the hyphenated form of any version, in either case', () => {
    expect(isUuid('01a203f2-971b-7f55-9af6-46d086c5dec8')).to.equal(true)
    expect(isUuid('2C3B9713-E41E-4A84-9CB3-870A619FE355')).to.equal(true)
    expect(isUuid('00000000-0000-0000-0000-000000000000')).to.equal(true)
  })

  it('refuses anything else', () => {
    for (const text of [
      '',
      'nope',
      '2c3b9713e41e4a849cb3870a619fe355',
      '{2c3b9713-e41e-4a84-9cb3-870a619fe355}',
      '2c3b9713-e41e-4a84-9cb3-870a619fe35',
      '2c3b9713-e41e-4a84-9cb3-870a619fe355 ',
      'g2c3b971-e41e-4a84-9cb3-870a619fe355',
    ]) {
      expect(isUuid(text), text).to.equal(false)
    }
  })
})

describe('canonicalUuid', () => {
  it('lower-cases a uuid, so that the same uuid in either case is one event', () => {
    expect(canonicalUuid('2C3B9713-E41E-4A84-9CB3-870A619FE355')).to.equal('2c3b9713-e41e-4a84-9cb3-870a619fe355')
    expect(canonicalUuid('2c3B9713-e41e-4A84-9cb3-870a619fE355')).to.equal('2c3b9713-e41e-4a84-9cb3-870a619fe355')
    expect(canonicalUuid('2c3b9713-e41e-4a84-9cb3-870a619fe355')).to.equal('2c3b9713-e41e-4a84-9cb3-870a619fe355')
  })

  it('leaves text that is not a uuid as it is, for validate to refuse', () => {
    expect(canonicalUuid('NOT-A-UUID')).to.equal('NOT-A-UUID')
    expect(canonicalUuid('')).to.equal('')
  })
})

describe('uuidv7', () => {
  it('lays out RFC 9562 version 7: the milliseconds of `at`, version 7, variant 10', () => {
    const at = new Date('2026-11-22T15:49:19.770Z')
    const id = uuidv7(at)
    expect(isUuid(id)).to.equal(true)
    const hex = id.replaceAll('-', '')
    expect(parseInt(hex.slice(0, 12), 16)).to.equal(at.getTime())
    expect(hex[12]).to.equal('7')
    expect(parseInt(hex[16]!, 16) >> 2).to.equal(0b10)
  })

  it('uses the current time by default', () => {
    const before = Date.now()
    const ms = parseInt(uuidv7().replaceAll('-', '').slice(0, 12), 16)
    expect(ms).to.be.within(before, Date.now())
  })

  it('fills the rest with random bits, so ids made in the same millisecond differ', () => {
    const at = new Date(1_700_000_000_000)
    const ids = new Set(Array.from({ length: 1000 }, () => uuidv7(at)))
    expect(ids.size).to.equal(1000)
  })

  it('sorts by time as text', () => {
    const earlier = uuidv7(new Date('2024-01-02T03:04:05.000Z'))
    const later = uuidv7(new Date('2024-01-02T03:04:05.001Z'))
    expect(earlier < later).to.equal(true)
  })

  it('uses 0 for times before 1970', () => {
    expect(uuidv7(new Date('1969-07-20T20:17:00Z')).startsWith('00000000-0000-7')).to.equal(true)
  })

  it('gives distinct random bits to uuids of the same millisecond, across refills of its random pool', () => {
    const at = new Date('2026-01-01T00:00:00Z')
    const made = Array.from({ length: 5_000 }, () => uuidv7(at))
    expect(new Set(made).size).to.equal(made.length)
    expect(new Set(made.map((u) => u.slice(0, 13))).size).to.equal(1)
  })
})
