import { expect } from 'chai'
import { Binary, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp } from 'bson'
import { encodeKey } from '../../../../../core/storage/embedded/engine/key-encoding.ts'

describe('index key encoding', () => {
  it('orders values as MongoDB compares them, across BSON types', () => {
    const ascending = [
      new MinKey(),
      null,
      -Infinity,
      -5.5,
      Long.fromNumber(-2),
      0,
      new Int32(3),
      3.25,
      Long.fromString('9007199254740000'),
      Infinity,
      '',
      'a',
      'a\u0000b',
      'ab',
      'b',
      {},
      { a: 1 },
      { a: 1, b: 1 },
      { b: 0 },
      [],
      [1],
      new Binary(Buffer.from([9])),
      new Binary(Buffer.from([1, 2])),
      ObjectId.createFromHexString('000000000000000000000001'),
      ObjectId.createFromHexString('ffffffffffffffffffffffff'),
      false,
      true,
      new Date(-1000),
      new Date(0),
      new Date(1000),
      new Timestamp({ t: 1, i: 2 }),
      /abc/,
      new MaxKey(),
    ]
    const keys = ascending.map(encodeKey)
    const sorted = [...keys].sort()
    expect(sorted).to.deep.equal(keys)
  })

  it('gives numbers of different BSON types the same key when their values are equal', () => {
    const ones = [1, new Int32(1), Long.fromNumber(1), new Double(1), Decimal128.fromString('1'), 1n]
    expect(new Set(ones.map(encodeKey)).size).to.equal(1)
    expect(encodeKey(-0)).to.equal(encodeKey(0))
    expect(encodeKey(undefined)).to.equal(encodeKey(null))
  })

  it('keeps compound keys unambiguous when concatenated', () => {
    const a = encodeKey('ab') + encodeKey('c')
    const b = encodeKey('a') + encodeKey('bc')
    expect(a).to.not.equal(b)
    expect(encodeKey('a') + encodeKey('z') < encodeKey('ab') + encodeKey('a')).to.equal(true)
  })
})
