import { expect } from 'chai'
import { Binary, Double, Int32, Long, ObjectId, serialize } from 'bson'
import { decode, encode } from '../../../../../core/storage/embedded/bson/codec.ts'
import { elementNamed, scalarFieldReader } from '../../../../../core/storage/embedded/bson/raw.ts'

describe('raw BSON reader', () => {
  describe('scalarFieldReader (the fields an insert indexes, without decoding the document)', () => {
    const scalars: Record<string, unknown> = {
      double: 1.5,
      negativeZero: new Double(-0),
      nan: Number.NaN,
      huge: 1e300,
      int32: new Int32(-7),
      smallLong: Long.fromNumber(-42),
      longAtLimit: Long.fromString('9007199254740992'),
      longAtNegativeLimit: Long.fromString('-9007199254740992'),
      ascii: 'abc',
      unicode: 'é\u{1f600}ü',
      byteOrderMark: '\ufeffkept',
      longAscii: '0123456789abcdef0123456789abcdef01234567',
      empty: '',
      date: new Date('2026-11-26T15:00:00.123Z'),
      dateBefore1970: new Date(-86_400_001),
      objectId: new ObjectId(),
      yes: true,
      no: false,
      nothing: null,
    }

    it('reads each scalar type as decoding the whole document does', () => {
      const bytes = encode({ skipped: { nested: [1, 2] }, ...scalars, after: 'x' })
      // a document may come as a Buffer (a wire frame's) or as a plain Uint8Array
      expect(scalarFieldReader(Object.keys(scalars))(new Uint8Array(bytes))).to.deep.equal(
        scalarFieldReader(Object.keys(scalars))(bytes),
      )
      const read = scalarFieldReader(Object.keys(scalars))(bytes)
      const decoded = decode(bytes)
      expect(read).not.to.equal(undefined)
      expect(Object.keys(read as object)).to.deep.equal(Object.keys(scalars))
      for (const name of Object.keys(scalars)) expect(read?.[name], name).to.deep.equal(decoded[name])
      expect(Object.is(read?.negativeZero, -0)).to.equal(true)
    })

    it('reads the deprecated undefined type as decoding does', () => {
      const bytes = serialize({ u: undefined, n: 1 }, { ignoreUndefined: false })
      const read = scalarFieldReader(['u', 'n'])(bytes)
      expect(read).to.deep.equal(decode(bytes))
      expect(Object.keys(read as object)).to.deep.equal(['u', 'n'])
    })

    it('leaves out the fields the document lacks and those not asked for', () => {
      const bytes = encode({ _id: 1, a: 'x', b: 2 })
      expect(scalarFieldReader(['_id', 'b', 'missing'])(bytes)).to.deep.equal({ _id: 1, b: 2 })
    })

    it('gives up (the caller decodes) on objects, arrays, binaries and longs beyond 2^53', () => {
      for (const value of [{ a: 1 }, [1], new Binary(Buffer.from([1])), Long.fromString('9007199254740993')]) {
        expect(scalarFieldReader(['v'])(encode({ v: value, w: 1 })), String(value)).to.equal(undefined)
        expect(scalarFieldReader(['w'])(encode({ v: value, w: 1 }))).to.deep.equal({ w: 1 })
      }
    })
  })

  it('elementNamed finds a top-level element by its name, not one nested', () => {
    const bytes = encode({ a: { _id: 1 }, b: 2, _id: 'x' })
    const found = elementNamed(bytes, Buffer.from('_id'))
    expect(found).not.to.equal(undefined)
    const { start, end } = found as { start: number; end: number }
    expect(bytes[start]).to.equal(0x02)
    expect(end).to.equal(bytes.length - 1)
    expect(elementNamed(bytes, Buffer.from('c'))).to.equal(undefined)
  })
})
