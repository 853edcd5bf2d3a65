import { encode, type Doc } from '../bson/codec.ts'
import { assemble, BsonType, elementsOf } from '../bson/raw.ts'

const utf8 = new TextEncoder()

function element(type: number, name: string, value: Uint8Array): Buffer {
  const nameBytes = utf8.encode(name)
  const out = Buffer.allocUnsafe(1 + nameBytes.length + 1 + value.length)
  out[0] = type
  out.set(nameBytes, 1)
  out[1 + nameBytes.length] = 0
  out.set(value, nameBytes.length + 2)
  return out
}

/** The raw elements of an ordinary document, to splice next to hand-built ones. */
function elementsOfDoc(doc: Doc): Uint8Array[] {
  const raw = encode(doc)
  return elementsOf(raw).map((e) => raw.subarray(e.start, e.end))
}

/** The raw `ok: 1` element that ends every reply. */
const OK_ELEMENT = elementsOfDoc({ ok: 1 })[0]

/** Bytes of the decimal digits of `i` (an array index's element name). */
function digits(i: number): number {
  let n = 1
  for (let rest = i; rest >= 10; rest = Math.floor(rest / 10)) n += 1
  return n
}

/** Writes the decimal digits of `i` at `at`; returns the offset after them. */
function writeDigits(out: Buffer, at: number, i: number): number {
  const end = at + digits(i)
  let rest = i
  for (let p = end - 1; p >= at; p--) {
    out[p] = 0x30 + (rest % 10)
    rest = Math.floor(rest / 10)
  }
  return end
}

/**
 * `{cursor: {firstBatch|nextBatch: [...], id, ns, ...extra}, ok: 1}` built around the documents'
 * stored bytes, so that a read returns every value with the exact type it was written with. Written
 * in one pass into one buffer: every query's reply is built here, each document copied once.
 */
export function cursorReply(
  batchName: 'firstBatch' | 'nextBatch',
  docs: Uint8Array[],
  cursorId: number,
  ns: string,
  extra: Doc = {},
): Buffer {
  let arraySize = 4 + 1
  for (let i = 0; i < docs.length; i++) arraySize += 1 + digits(i) + 1 + docs[i].length
  const nsBytes = Buffer.byteLength(ns)
  const extraElements = Object.keys(extra).length > 0 ? elementsOfDoc(extra) : []
  let cursorSize = 4 + (1 + batchName.length + 1 + arraySize) + (1 + 3 + 8) + (1 + 3 + 4 + nsBytes + 1) + 1
  for (const e of extraElements) cursorSize += e.length
  const total = 4 + (1 + 7 + cursorSize) + OK_ELEMENT.length + 1
  const out = Buffer.allocUnsafe(total)
  let at = out.writeInt32LE(total, 0)
  out[at++] = BsonType.document
  at += out.write('cursor\0', at, 'latin1')
  at = out.writeInt32LE(cursorSize, at)
  out[at++] = BsonType.array
  at += out.write(batchName, at, 'latin1')
  out[at++] = 0
  at = out.writeInt32LE(arraySize, at)
  for (let i = 0; i < docs.length; i++) {
    out[at++] = BsonType.document
    at = writeDigits(out, at, i)
    out[at++] = 0
    out.set(docs[i], at)
    at += docs[i].length
  }
  out[at++] = 0
  out[at++] = BsonType.int64
  at += out.write('id\0', at, 'latin1')
  // cursor ids are non-negative safe integers
  at = out.writeUInt32LE(cursorId % 2 ** 32, at)
  at = out.writeUInt32LE(Math.floor(cursorId / 2 ** 32), at)
  out[at++] = BsonType.string
  at += out.write('ns\0', at, 'latin1')
  at = out.writeInt32LE(nsBytes + 1, at)
  at += out.write(ns, at, 'utf8')
  out[at++] = 0
  for (const e of extraElements) {
    out.set(e, at)
    at += e.length
  }
  out[at++] = 0
  out.set(OK_ELEMENT, at)
  at += OK_ELEMENT.length
  out[at] = 0
  return out
}

/** `{...fields, value: <stored bytes or null>, ok: 1}`: findAndModify's reply. */
export function replyWithRawValue(fields: Doc, value: Uint8Array | null): Buffer {
  const valueElement = value ? element(BsonType.document, 'value', value) : element(0x0a, 'value', new Uint8Array(0))
  return assemble([...elementsOfDoc(fields), valueElement, ...elementsOfDoc({ ok: 1 })])
}
