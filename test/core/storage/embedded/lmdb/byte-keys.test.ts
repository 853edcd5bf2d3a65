import { expect } from 'chai'
import {
  byteLength,
  fromBytes,
  joinBytes,
  ScratchBytes,
  toBytes,
} from '../../../../../core/storage/embedded/lmdb/byte-keys.ts'
import { encodeKey, KEY_MAX } from '../../../../../core/storage/embedded/engine/key-encoding.ts'

const samples = [
  '',
  'a',
  'ab',
  '\u0000',
  '\u0001',
  '\u007f',
  '\u0080',
  '\u00ff',
  '\u07ff',
  '\u0800',
  '\ud000',
  '\ud7ff',
  '\ud800',
  'x\udc00y',
  '\ud83d\ude00',
  '\ue000',
  '\uffff',
  'é',
  'z\u0000',
  `z${KEY_MAX}`,
]

describe('lmdb byte keys', () => {
  it('orders bytes as the strings order (UTF-16 code units, surrogates and KEY_MAX included)', () => {
    const values: unknown[] = [...samples, 0, -1.5, 1e300, new Date(0), true, null, [1, 'a'], { a: '\ud83d\ude00' }]
    const keys = [...samples, ...values.map((v) => encodeKey(v))]
    for (const a of keys) {
      for (const b of keys) {
        const strings = a < b ? -1 : a > b ? 1 : 0
        expect(
          Math.sign(Buffer.compare(toBytes(a), toBytes(b))),
          `${JSON.stringify(a)} vs ${JSON.stringify(b)}`,
        ).to.equal(strings)
      }
    }
  })

  it('decodes what it encodes and never writes the byte 0xff', () => {
    for (const s of [...samples, samples.join(''), 'x'.repeat(10_000)]) {
      const bytes = toBytes(s)
      expect(fromBytes(bytes)).to.equal(s)
      expect(bytes.includes(0xff)).to.equal(false)
      expect(byteLength(s)).to.equal(bytes.length)
    }
  })

  it('joins a head and several parts (with and without surrogates) as their encodings one after another', () => {
    const head = Buffer.from([0, 0, 0, 7])
    for (const a of samples) {
      for (const b of samples) {
        const joined = joinBytes(head, a, b)
        expect(joined.equals(Buffer.concat([head, toBytes(a), toBytes(b)])), `${JSON.stringify([a, b])}`).to.equal(true)
        expect(fromBytes(joined, 4, 4 + byteLength(a))).to.equal(a)
        expect(fromBytes(joined, 4 + byteLength(a))).to.equal(b)
      }
    }
  })

  it('writes the same bytes into a reused buffer (ScratchBytes), growing it for keys longer than it', () => {
    const scratch = new ScratchBytes()
    const head = Buffer.from([0, 0, 0, 9])
    for (const [a, b] of [...samples.map((s) => [s, 'x']), ['\u0800'.repeat(3000), 'y'], ['a', '']]) {
      const joined = scratch.join(head, a, b)
      expect(joined.equals(joinBytes(head, a, b)), `${JSON.stringify([a.slice(0, 9), b])}`).to.equal(true)
    }
  })
})
