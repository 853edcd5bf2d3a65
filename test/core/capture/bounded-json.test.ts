import { expect } from 'chai'
import { boundedJson } from '../../../core/capture/bounded-json.ts'

describe('boundedJson', () => {
  it('writes what JSON.stringify writes when no limit is reached, keys in the order sent', () => {
    const value = { b: [1, 'two', null, { c: true }], a: { '\u0000': 'x', é: 1.5 }, skipped: undefined }
    expect(boundedJson(value)).to.equal(JSON.stringify(value))
  })

  it('stops soon after the limit: a prefix of the full JSON, whatever the size of the value', () => {
    const wide = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`key_${i}`, [i, i]]))
    const prefix = boundedJson(wide, 100)
    expect(prefix.length).to.be.greaterThan(100).and.lessThan(200)
    expect(JSON.stringify(wide).startsWith(prefix.slice(0, 100))).to.equal(true)
  })

  it('sorts keys by code point (UTF-8 byte order) when asked: U+E000–FFFF before the surrogate pairs of higher code points', () => {
    expect(boundedJson({ '😀': 1, '\uFF21': 2, z: 3, A: 4, '\uD7FF': 5 }, Infinity, { sortKeys: true })).to.equal(
      '{"A":4,"z":3,"\uD7FF":5,"Ａ":2,"😀":1}',
    )
    const sortedByBytes = ['b', '\uE000', 'a😀', 'a', '\uFFFF', '😀'].sort((x, y) =>
      Buffer.compare(Buffer.from(x), Buffer.from(y)),
    )
    const printed = boundedJson(Object.fromEntries(sortedByBytes.map((key, i) => [key, i]).reverse()), Infinity, {
      sortKeys: true,
    })
    expect(Object.keys(JSON.parse(printed) as object)).to.deep.equal(sortedByBytes)
  })
})
