import { expect } from 'chai'
import { canonicalJson, cutToScalars, distinctIdOf } from '../../../core/capture/distinct-id.ts'

describe('distinctIdOf', () => {
  it('uses a top-level string as it is', () => {
    expect(distinctIdOf({ distinct_id: ' user 1 ' })).to.equal(' user 1 ')
    expect(distinctIdOf({ $distinct_id: 'engage-user' })).to.equal('engage-user')
  })

  it('prefers the top level over properties.distinct_id', () => {
    expect(distinctIdOf({ distinct_id: 'top', properties: { distinct_id: 'nested' } })).to.equal('top')
  })

  it('falls back to properties.distinct_id when the top level is missing or null', () => {
    expect(distinctIdOf({ properties: { distinct_id: 'nested' } })).to.equal('nested')
    expect(distinctIdOf({ distinct_id: null, properties: { distinct_id: 'nested' } })).to.equal('nested')
  })

  it("returns '' when there is no id, or it is null or empty", () => {
    expect(distinctIdOf({ event: 'x' })).to.equal('')
    expect(distinctIdOf({ distinct_id: null })).to.equal('')
    expect(distinctIdOf({ distinct_id: '' })).to.equal('')
    expect(distinctIdOf({ distinct_id: '', properties: { distinct_id: 'nested' } })).to.equal('')
    expect(distinctIdOf({ properties: 'not an object' })).to.equal('')
  })

  it('prints numbers and booleans as JSON text', () => {
    expect(distinctIdOf({ distinct_id: 23 })).to.equal('23')
    expect(distinctIdOf({ distinct_id: 23.4 })).to.equal('23.4')
    expect(distinctIdOf({ distinct_id: true })).to.equal('true')
  })

  it('prints objects as compact JSON with sorted keys, at every depth', () => {
    expect(distinctIdOf({ distinct_id: { string: 'a', number: 3 } })).to.equal('{"number":3,"string":"a"}')
    expect(distinctIdOf({ distinct_id: [{ b: [2, { z: 1, a: null }], a: 'x' }] })).to.equal(
      '[{"a":"x","b":[2,{"a":null,"z":1}]}]',
    )
  })

  it('replaces NUL with U+FFFD', () => {
    expect(distinctIdOf({ distinct_id: 'a\0b' })).to.equal('a\uFFFDb')
  })

  it('cuts the id to 200 Unicode scalars, not UTF-16 units', () => {
    const emoji = '😀'.repeat(250)
    const cut = distinctIdOf({ distinct_id: emoji })
    expect([...cut]).to.have.length(200)
    expect(cut).to.equal('😀'.repeat(200))
    expect(distinctIdOf({ distinct_id: 'x'.repeat(1000) })).to.equal('x'.repeat(200))
  })

  it('cuts a printed object too, and copes with very deep nesting', () => {
    let deep: unknown = 'bottom'
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(distinctIdOf({ distinct_id: deep })).to.equal('['.repeat(200))
    const wide = Array.from({ length: 100_000 }, (_, i) => i)
    expect(distinctIdOf({ distinct_id: wide })).to.equal(JSON.stringify(wide).slice(0, 200))
  })
})

describe('canonicalJson', () => {
  it('orders keys by their UTF-8 bytes, as serde_json does', () => {
    expect(canonicalJson({ '\uFF21': 1, '😀': 2, b: 3, A: 4 })).to.equal('{"A":4,"b":3,"Ａ":1,"😀":2}')
  })
})

describe('cutToScalars', () => {
  it('leaves short text alone and never splits a surrogate pair', () => {
    expect(cutToScalars('abc', 5)).to.equal('abc')
    expect(cutToScalars('a😀b', 2)).to.equal('a😀')
  })
})
