import { Long } from 'bson'
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

/** A BSON array whose items are documents given as raw bytes (sent exactly as stored). */
export function rawArray(docs: Uint8Array[]): Buffer {
  return assemble(docs.map((d, i) => element(BsonType.document, String(i), d)))
}

/**
 * `{cursor: {firstBatch|nextBatch: [...], id, ns, ...extra}, ok: 1}` built around the documents'
 * stored bytes, so that a read returns every value with the exact type it was written with.
 */
export function cursorReply(
  batchName: 'firstBatch' | 'nextBatch',
  docs: Uint8Array[],
  cursorId: number,
  ns: string,
  extra: Doc = {},
): Buffer {
  const cursor = assemble([
    element(BsonType.array, batchName, rawArray(docs)),
    ...elementsOfDoc({ id: Long.fromNumber(cursorId), ns, ...extra }),
  ])
  return assemble([element(BsonType.document, 'cursor', cursor), ...elementsOfDoc({ ok: 1 })])
}

/** `{...fields, value: <stored bytes or null>, ok: 1}`: findAndModify's reply. */
export function replyWithRawValue(fields: Doc, value: Uint8Array | null): Buffer {
  const valueElement = value ? element(BsonType.document, 'value', value) : element(0x0a, 'value', new Uint8Array(0))
  return assemble([...elementsOfDoc(fields), valueElement, ...elementsOfDoc({ ok: 1 })])
}
