import { expect } from 'chai'
import { normaliseForPerson, operationsOf } from '../../../plugins/persons/normalise.ts'

const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>

describe('persons: normalisation', () => {
  it('lifts device, page and campaign properties into $set and $initial_* into $set_once', () => {
    const result = normaliseForPerson({
      $browser: 'Firefox',
      $current_url: 'https://x.test/a',
      utm_source: 'news',
      gclid: 'g1',
      other: 1,
    })
    expect(plain(result.$set)).to.deep.equal({
      $browser: 'Firefox',
      $current_url: 'https://x.test/a',
      utm_source: 'news',
      gclid: 'g1',
    })
    expect(plain(result.$set_once)).to.deep.equal({
      $initial_browser: 'Firefox',
      $initial_current_url: 'https://x.test/a',
      $initial_utm_source: 'news',
      $initial_gclid: 'g1',
    })
    expect(result.other).to.equal(1)
  })

  it('lets explicit $set and $set_once values win over lifted ones', () => {
    const result = normaliseForPerson({
      $browser: 'Firefox',
      $set: { $browser: 'Chrome' },
      $set_once: { $initial_browser: 'Safari' },
    })
    expect(plain(result.$set)).to.deep.equal({ $browser: 'Chrome' })
    expect(plain(result.$set_once)).to.deep.equal({ $initial_browser: 'Safari' })
  })

  it('keeps nulls in $set but never writes a null first-touch value', () => {
    const result = normaliseForPerson({ utm_source: null, $referrer: '$direct' })
    expect(plain(result.$set)).to.deep.equal({ utm_source: null, $referrer: '$direct' })
    expect(plain(result.$set_once)).to.deep.equal({ $initial_referrer: '$direct' })
  })

  it('treats $os_name as an alias of $os: fills $os, sets $initial_os, and never stores $os_name on the person', () => {
    const result = normaliseForPerson({ $os_name: 'iOS' })
    expect(result.$os).to.equal('iOS')
    expect(plain(result.$set)).to.deep.equal({ $os: 'iOS' })
    expect(plain(result.$set_once)).to.deep.equal({ $initial_os: 'iOS' })
  })

  it('keeps an event $os over $os_name, and still fills $initial_os from $os_name when $os is null', () => {
    expect(plain(normaliseForPerson({ $os: 'Mac OS X', $os_name: 'macOS' }).$set)).to.deep.equal({ $os: 'Mac OS X' })
    const nullOs = normaliseForPerson({ $os: null, $os_name: 'Android' })
    expect(plain(nullOs.$set)).to.deep.equal({ $os: null })
    expect(plain(nullOs.$set_once)).to.deep.equal({ $initial_os: 'Android' })
  })

  it('does not lift a server SDK host $os or $os_version', () => {
    const result = normaliseForPerson({ $is_server: true, $os: 'Linux', $os_version: '6.1', $browser: 'x' })
    expect(plain(result.$set)).to.deep.equal({ $browser: 'x' })
  })

  it('leaves an event without person properties untouched, and replaces a malformed $set with {}', () => {
    expect(normaliseForPerson({ a: 1 })).to.deep.equal({ a: 1 })
    expect(plain(normaliseForPerson({ $set: 'oops' }).$set)).to.deep.equal({})
  })

  it('does not change the object it was given', () => {
    const source = { $browser: 'Firefox', $set: { a: 1 } }
    normaliseForPerson(source)
    expect(source).to.deep.equal({ $browser: 'Firefox', $set: { a: 1 } })
  })

  it('reads $unset as an array of string keys or as the keys of an object', () => {
    expect(operationsOf({ $unset: ['a', 3, 'b'] }).unset).to.deep.equal(['a', 'b'])
    expect(operationsOf({ $unset: { c: 1, d: null } }).unset).to.deep.equal(['c', 'd'])
    expect(operationsOf({ $unset: 'x' }).unset).to.deep.equal([])
  })

  it('keeps the first maxKeys keys of each operation in the order sent, and counts what was sent', () => {
    const ops = operationsOf({ $set: { a: 1, b: 2, c: 3 }, $set_once: { x: 1 }, $unset: ['p', 1, 'q', 'r'] }, 2)
    expect(JSON.parse(JSON.stringify(ops))).to.deep.equal({
      set: { a: 1, b: 2 },
      setOnce: { x: 1 },
      unset: ['p', 'q'],
      exceeded: { set_keys: 3, unset_keys: 3 },
    })
    expect(operationsOf({ $set: { a: 1, b: 2 } }, 2)).to.not.have.property('exceeded')
  })
})
