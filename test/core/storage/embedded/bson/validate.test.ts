import { expect } from 'chai'
import { Binary, Code, Decimal128, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp } from 'bson'
import { decode, encode } from '../../../../../core/storage/embedded/bson/codec.ts'
import { checkBsonDocument, InvalidBsonError } from '../../../../../core/storage/embedded/bson/validate.ts'
import { exceedsStorageDepth } from '../../../../../core/storage/embedded/engine/depth.ts'

/** A document of every BSON type the codec writes, nested. */
const EVERY_TYPE = {
  _id: new ObjectId(),
  double: 1.5,
  string: 'é \u{1f600} ascii',
  object: { a: { b: [1, { c: 'x' }] }, empty: {} },
  array: [1, 'two', [3], []],
  binary: new Binary(Buffer.from([1, 2, 3]), 0),
  oldBinary: new Binary(Buffer.from([4, 5]), 2),
  undefinedValue: undefined,
  bool: true,
  date: new Date(-1),
  null: null,
  regex: /a.b/i,
  code: new Code('x + 1'),
  codeWithScope: new Code('x + y', { y: 2 }),
  int32: new Int32(7),
  timestamp: new Timestamp({ t: 1, i: 2 }),
  int64: Long.fromString('9007199254740993'),
  decimal: Decimal128.fromString('1.25'),
  min: new MinKey(),
  max: new MaxKey(),
}

function nested(levels: number): Record<string, unknown> {
  let doc: Record<string, unknown> = { leaf: 1 }
  for (let i = 1; i < levels; i++) doc = { d: doc }
  return doc
}

/** Bytes with the little-endian int32 at `at` set to `value`. */
function withInt32(bytes: Buffer, at: number, value: number): Buffer {
  const copy = Buffer.from(bytes)
  copy.writeInt32LE(value, at)
  return copy
}

describe('BSON document check (inserted documents kept undecoded)', () => {
  it('accepts a document of every BSON type, as the codec writes it', () => {
    const bytes = encode(EVERY_TYPE as Record<string, unknown>)
    expect(checkBsonDocument(bytes)).to.equal(5)
    expect(() => decode(bytes)).not.to.throw()
  })

  it('counts nesting as the storage depth check does (an empty object or array adds no level)', () => {
    expect(checkBsonDocument(encode({ a: 1 }))).to.equal(1)
    expect(checkBsonDocument(encode({ a: {}, b: [] }))).to.equal(1)
    expect(checkBsonDocument(encode({ a: [[{ b: 1 }]] }))).to.equal(4)
    for (const levels of [179, 180, 181]) {
      const bytes = encode(nested(levels))
      expect(checkBsonDocument(bytes)).to.equal(levels)
      expect(exceedsStorageDepth(bytes)).to.equal(levels > 180)
    }
  })

  it('refuses malformed documents, each as decoding them would', () => {
    const good = encode({ s: 'abc', o: { n: 1 }, b: true })
    // offsets: 0 size, 4 type of s, 5 name, 7 string size, 11 'abc\0', 15 type of o, 16 name, 18 size of o
    const cases: Array<[string, Buffer]> = [
      ['a size that is not the length', withInt32(good, 0, good.length + 1)],
      ['a string longer than its document', withInt32(good, 7, 1000)],
      ['a string of size 0', withInt32(good, 7, 0)],
      ['a string without its terminator', Buffer.from(good).fill(0x61, 14, 15)],
      ['invalid UTF-8', Buffer.from(good).fill(0xff, 11, 12)],
      ['an embedded document longer than its container', withInt32(good, 18, 100)],
      ['an embedded document shorter than its elements', withInt32(good, 18, 6)],
      ['an unknown element type', Buffer.from(good).fill(0x42, 4, 5)],
      ['a boolean that is 2', Buffer.from(good).fill(2, good.length - 2, good.length - 1)],
      ['no terminator', Buffer.from(good).fill(1, good.length - 1)],
    ]
    for (const [what, bytes] of cases) {
      expect(() => checkBsonDocument(bytes), what).to.throw(InvalidBsonError)
      expect(() => decode(bytes), what).to.throw()
    }
  })

  it('refuses inconsistent binary and code-with-scope lengths', () => {
    const oldBinary = encode({ b: new Binary(Buffer.from([1, 2, 3]), 2) })
    // 4 type, 5 'b\0', 7 size, 11 subtype, 12 inner size
    expect(() => checkBsonDocument(withInt32(oldBinary, 12, 2))).to.throw(InvalidBsonError)
    const scoped = encode({ c: new Code('x', { y: 1 }) })
    // 4 type, 5 'c\0', 7 total size
    expect(() => checkBsonDocument(withInt32(scoped, 7, scoped.readInt32LE(7) - 1))).to.throw(InvalidBsonError)
  })

  it('never accepts bytes that decoding refuses (10,000 documents with one byte changed)', () => {
    const bytes = encode(EVERY_TYPE as Record<string, unknown>)
    let seed = 1
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed / 0x80000000
    }
    let refused = 0
    for (let i = 0; i < 10_000; i++) {
      const mutated = Buffer.from(bytes)
      mutated[Math.floor(random() * mutated.length)] = Math.floor(random() * 256)
      let accepted = true
      try {
        checkBsonDocument(mutated)
      } catch (error) {
        expect(error).to.be.instanceOf(InvalidBsonError)
        accepted = false
        refused += 1
      }
      if (accepted) expect(() => decode(mutated), mutated.toString('hex')).not.to.throw()
    }
    expect(refused).to.be.greaterThan(1000)
  })
})
