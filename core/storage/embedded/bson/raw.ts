import { ObjectId } from 'bson'
/**
 * A minimal reader for raw BSON bytes. Stored documents are kept as the bytes the client sent, so
 * that every value keeps its exact BSON type; this walks those bytes without decoding them.
 */
export interface RawElement {
  type: number
  name: string
  /** Offset of the element's type byte. */
  start: number
  /** Offset of the element's value. */
  valueStart: number
  /** Offset just past the element. */
  end: number
}

export const BsonType = {
  double: 0x01,
  string: 0x02,
  document: 0x03,
  array: 0x04,
  binary: 0x05,
  objectId: 0x07,
  int32: 0x10,
  int64: 0x12,
} as const

const decoder = new TextDecoder('utf-8')

/** Field names are nearly always ASCII: decode those without the TextDecoder round trip. */
function decodeName(bytes: Uint8Array, start: number, end: number): string {
  let ascii = true
  for (let i = start; i < end; i++)
    if (bytes[i] >= 0x80) {
      ascii = false
      break
    }
  if (!ascii) return decoder.decode(bytes.subarray(start, end))
  let name = ''
  for (let i = start; i < end; i++) name += String.fromCharCode(bytes[i])
  return name
}

/** The little-endian signed 32-bit integer at `at`. */
export function int32(bytes: Uint8Array, at: number): number {
  return bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)
}

export function documentLength(bytes: Uint8Array, offset = 0): number {
  return int32(bytes, offset) >>> 0
}

function cstringEnd(bytes: Uint8Array, offset: number, limit: number): number {
  let i = offset
  while (i < limit && bytes[i] !== 0) i++
  if (i >= limit) throw new RangeError('BSON cstring runs past the end of its document')
  return i
}

/** Bytes of the value of an element of `type` starting at `at`; strings of a regex stop at `limit`. */
export function valueLength(bytes: Uint8Array, type: number, at: number, limit: number): number {
  switch (type) {
    case 0x01:
    case 0x09:
    case 0x11:
    case 0x12:
      return 8
    case 0x02:
    case 0x0d:
    case 0x0e:
      return 4 + documentLength(bytes, at)
    case 0x03:
    case 0x04:
    case 0x0f:
      return documentLength(bytes, at)
    case 0x05:
      return 5 + documentLength(bytes, at)
    case 0x06:
    case 0x0a:
    case 0xff:
    case 0x7f:
      return 0
    case 0x07:
      return 12
    case 0x08:
      return 1
    case 0x0b: {
      const patternEnd = cstringEnd(bytes, at, limit)
      return cstringEnd(bytes, patternEnd + 1, limit) + 1 - at
    }
    case 0x0c:
      return 4 + documentLength(bytes, at) + 12
    case 0x10:
      return 4
    case 0x13:
      return 16
    default:
      throw new RangeError(`unknown BSON element type 0x${type.toString(16)}`)
  }
}

/** The top-level elements of the document starting at `offset`. */
export function elementsOf(bytes: Uint8Array, offset = 0): RawElement[] {
  const limit = offset + documentLength(bytes, offset) - 1
  const out: RawElement[] = []
  let at = offset + 4
  while (at < limit) {
    const type = bytes[at]
    const nameEnd = cstringEnd(bytes, at + 1, limit)
    const valueStart = nameEnd + 1
    const end = valueStart + valueLength(bytes, type, valueStart, limit + 1)
    if (end > limit) throw new RangeError('BSON element runs past the end of its document')
    out.push({ type, name: decodeName(bytes, at + 1, nameEnd), start: at, valueStart, end })
    at = end
  }
  return out
}

/** The top-level element named `name` (compared as bytes: no name is decoded), if any. */
export function elementNamed(bytes: Uint8Array, name: Uint8Array): { start: number; end: number } | undefined {
  const limit = documentLength(bytes) - 1
  let at = 4
  while (at < limit) {
    const nameEnd = cstringEnd(bytes, at + 1, limit)
    const end = nameEnd + 1 + valueLength(bytes, bytes[at], nameEnd + 1, limit + 1)
    if (nameIs(bytes, at + 1, nameEnd, name)) return { start: at, end }
    at = end
  }
  return undefined
}

/** The raw bytes of each item of the array (or document) field `field`, if present. */
export function rawItems(bytes: Uint8Array, field: string): Uint8Array[] | undefined {
  const element = elementsOf(bytes).find((e) => e.name === field)
  if (!element || (element.type !== BsonType.array && element.type !== BsonType.document)) return undefined
  return elementsOf(bytes, element.valueStart)
    .filter((e) => e.type === BsonType.document)
    .map((e) => bytes.subarray(e.valueStart, e.end))
}

/** The raw bytes of one top-level embedded document field, if it is one. */
export function rawField(bytes: Uint8Array, field: string): Uint8Array | undefined {
  const element = elementsOf(bytes).find((e) => e.name === field)
  if (!element || element.type !== BsonType.document) return undefined
  return bytes.subarray(element.valueStart, element.end)
}

function writeInt32(target: Uint8Array, offset: number, value: number): void {
  target[offset] = value & 0xff
  target[offset + 1] = (value >>> 8) & 0xff
  target[offset + 2] = (value >>> 16) & 0xff
  target[offset + 3] = (value >>> 24) & 0xff
}

/** A document made of the given raw elements, in that order. */
export function assemble(parts: Uint8Array[]): Buffer {
  const size = 4 + parts.reduce((sum, p) => sum + p.length, 0) + 1
  const out = Buffer.allocUnsafe(size)
  writeInt32(out, 0, size)
  let at = 4
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  out[at] = 0
  return out
}

/** A raw `_id: ObjectId` element. */
export function objectIdElement(id: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + 4 + 12)
  out[0] = BsonType.objectId
  out.set([0x5f, 0x69, 0x64, 0], 1)
  out.set(id, 5)
  return out
}

const utf8 = new TextEncoder()

function nameIs(bytes: Uint8Array, start: number, end: number, name: Uint8Array): boolean {
  if (end - start !== name.length) return false
  for (let i = 0; i < name.length; i++) if (bytes[start + i] !== name[i]) return false
  return true
}

/**
 * A picker of top-level fields: the document reduced to them is much cheaper to decode than the
 * whole (index builds read a few fields of every document). Names are compared as bytes.
 */
export function fieldPicker(names: Iterable<string>): (bytes: Uint8Array) => Buffer {
  const wanted = [...names].map((n) => utf8.encode(n))
  return (bytes) => {
    const limit = documentLength(bytes) - 1
    const parts: Uint8Array[] = []
    let at = 4
    while (at < limit) {
      const type = bytes[at]
      const nameEnd = cstringEnd(bytes, at + 1, limit)
      const end = nameEnd + 1 + valueLength(bytes, type, nameEnd + 1, limit + 1)
      if (wanted.some((w) => nameIs(bytes, at + 1, nameEnd, w))) parts.push(bytes.subarray(at, end))
      at = end
    }
    return assemble(parts)
  }
}

const float = new Float64Array(1)
const floatBytes = new Uint8Array(float.buffer)

/** A 64-bit integer's two halves as one number: exact within ±2^53 (as js-bson's Long.toNumber). */
function int64(bytes: Uint8Array, at: number): number {
  return int32(bytes, at + 4) * 0x1_0000_0000 + (int32(bytes, at) >>> 0)
}

/** Whether the int64 at `at` lies within ±2^53, which decode turns into a number (a Long beyond). */
function promotedLong(bytes: Uint8Array, at: number): boolean {
  const high = int32(bytes, at + 4)
  return (high >= -0x20_0000 && high < 0x20_0000) || (high === 0x20_0000 && int32(bytes, at) === 0)
}

/**
 * The value of a scalar element as codec.ts's decode makes it (numbers, strings, dates, booleans,
 * null, ObjectIds), or NOT_SCALAR for any other type. Strings are known to be valid UTF-8, and are
 * decoded as js-bson does on Node (Buffer's decoder, which keeps a leading byte order mark).
 */
function scalarValue(bytes: Buffer, type: number, at: number): unknown {
  switch (type) {
    case 0x01:
      for (let i = 0; i < 8; i++) floatBytes[i] = bytes[at + i]
      return float[0]
    case 0x02:
      return bytes.toString('utf8', at + 4, at + 4 + int32(bytes, at) - 1)
    case 0x10:
      return int32(bytes, at)
    case 0x12:
      return promotedLong(bytes, at) ? int64(bytes, at) : NOT_SCALAR
    case 0x09:
      return new Date(int64(bytes, at))
    case 0x07:
      return new (ObjectId as unknown as new (bytes: Uint8Array, offset: number) => ObjectId)(bytes, at)
    case 0x08:
      return bytes[at] === 1
    case 0x0a:
      return null
    case 0x06:
      return undefined
    default:
      return NOT_SCALAR
  }
}

const NOT_SCALAR = Symbol('not a scalar')

/**
 * A reader of top-level fields that are scalars, straight from the bytes: an object of those of
 * `names` the document has, or undefined when one of them holds anything else (an object, an
 * array, a binary...), which the caller then decodes. Cheaper than picking and decoding.
 */
export function scalarFieldReader(names: Iterable<string>): (bytes: Uint8Array) => Record<string, unknown> | undefined {
  // the names by their length in bytes: most elements are passed over on their name's length alone
  const byLength: Array<Array<{ name: string; bytes: Uint8Array }>> = []
  for (const name of names) {
    const bytes = utf8.encode(name)
    ;(byLength[bytes.length] ??= []).push({ name, bytes })
  }
  return (document) => {
    const bytes = Buffer.isBuffer(document)
      ? document
      : Buffer.from(document.buffer, document.byteOffset, document.byteLength)
    const limit = documentLength(bytes) - 1
    const out: Record<string, unknown> = {}
    let at = 4
    while (at < limit) {
      const type = bytes[at]
      const nameEnd = cstringEnd(bytes, at + 1, limit)
      const end = nameEnd + 1 + valueLength(bytes, type, nameEnd + 1, limit + 1)
      const candidates = byLength[nameEnd - at - 1]
      if (candidates)
        for (const wanted of candidates) {
          if (!nameIs(bytes, at + 1, nameEnd, wanted.bytes)) continue
          const value = scalarValue(bytes, type, nameEnd + 1)
          if (value === NOT_SCALAR) return undefined
          out[wanted.name] = value
          break
        }
      at = end
    }
    return out
  }
}
