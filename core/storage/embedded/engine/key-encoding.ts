import { isPlainObject } from '../bson/codec.ts'

/**
 * Index keys are strings whose plain string order is MongoDB's BSON comparison order: a type
 * marker in MongoDB's canonical type order, then an order-preserving body. Every encoding is
 * self-delimiting, so compound keys are the concatenation of their parts and a prefix range
 * ("every key starting with these parts") is a string range.
 *
 * Numbers of every BSON type encode by value (1, 1.0 and Long(1) are the same key), as in MongoDB.
 * int64 values beyond 2^53 and Decimal128 are compared as doubles: close neighbours may share a
 * key, which only widens a scan (every candidate is re-checked against the full filter).
 */
export const TypeMarker = {
  minKey: '0',
  nullish: '1',
  number: '2',
  string: '3',
  object: '4',
  array: '5',
  binary: '6',
  objectId: '7',
  boolean: '8',
  date: '9',
  timestamp: 'A',
  regex: 'B',
  other: 'Y',
  maxKey: 'Z',
} as const

/** Greater than every encoded key part: the upper bound of a prefix range. */
export const KEY_MAX = '\uffff'

const FIELD = '\u0002'
const END = '\u0000'

const float = new Float64Array(1)
const words = new Uint32Array(float.buffer)

/**
 * Fixed-width parts are written as one-byte characters (each char is a byte, big-endian), which
 * keeps keys short and still ordered by plain string comparison.
 */
function word(n: number): string {
  return String.fromCharCode((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff)
}

function sortableNumber(n: number): string {
  if (Number.isNaN(n)) return '\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000'
  float[0] = n === 0 ? 0 : n
  let hi = words[1]
  let lo = words[0]
  if (hi & 0x80000000) {
    hi = ~hi >>> 0
    lo = ~lo >>> 0
  } else {
    hi = (hi | 0x80000000) >>> 0
  }
  return word(hi) + word(lo)
}

/** Strings end with END; the characters END and \u0001 are escaped so they never end one early. */
function escape(s: string): string {
  if (!/[\u0000\u0001]/.test(s)) return s + END
  return s.replace(/\u0001/g, '\u0001\u0002').replace(/\u0000/g, '\u0001\u0001') + END
}

function bytesKey(bytes: Uint8Array): string {
  if (bytes.length === 12) {
    const b = bytes
    return String.fromCharCode(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11])
  }
  const chunks: string[] = []
  for (let i = 0; i < bytes.length; i += 4096) chunks.push(String.fromCharCode(...bytes.subarray(i, i + 4096)))
  return chunks.join('')
}

function encodeBsonValue(value: { _bsontype: string }): string {
  const v = value as unknown as Record<string, unknown>
  switch (value._bsontype) {
    case 'ObjectId':
      return TypeMarker.objectId + bytesKey((v as unknown as { id: Uint8Array }).id)
    case 'Long':
    case 'Int32':
    case 'Double':
    case 'Decimal128':
      return TypeMarker.number + sortableNumber(Number(String(value)))
    case 'Binary': {
      const binary = value as unknown as { buffer: Uint8Array; sub_type: number; position: number }
      const bytes = binary.buffer.subarray(0, binary.position)
      return [TypeMarker.binary, word(bytes.length), String.fromCharCode(binary.sub_type & 0xff), bytesKey(bytes)].join(
        '',
      )
    }
    case 'Timestamp': {
      const ts = value as unknown as { t: number; i: number }
      return TypeMarker.timestamp + word(ts.t) + word(ts.i)
    }
    case 'MinKey':
      return TypeMarker.minKey
    case 'MaxKey':
      return TypeMarker.maxKey
    case 'BSONRegExp':
      return [TypeMarker.regex, escape(String(v.pattern)), escape(String(v.options))].join('')
    case 'BSONSymbol':
      return [TypeMarker.string, escape(String(v.value))].join('')
    default:
      return [TypeMarker.other, escape(value._bsontype), escape(JSON.stringify(v))].join('')
  }
}

function encodeInto(value: unknown, out: string[]): void {
  if (value === null || value === undefined) {
    out.push(TypeMarker.nullish)
    return
  }
  switch (typeof value) {
    case 'number':
      out.push(TypeMarker.number, sortableNumber(value))
      return
    case 'bigint':
      out.push(TypeMarker.number, sortableNumber(Number(value)))
      return
    case 'string':
      out.push(TypeMarker.string, escape(value))
      return
    case 'boolean':
      out.push(TypeMarker.boolean, value ? '1' : '0')
      return
    default:
      break
  }
  if (value instanceof Date) {
    out.push(TypeMarker.date, sortableNumber(value.getTime()))
  } else if (Array.isArray(value)) {
    out.push(TypeMarker.array)
    for (const item of value) {
      out.push(FIELD)
      encodeInto(item, out)
    }
    out.push(END)
  } else if (value instanceof RegExp) {
    out.push(TypeMarker.regex, escape(value.source), escape(value.flags))
  } else if (isPlainObject(value)) {
    out.push(TypeMarker.object)
    for (const [name, field] of Object.entries(value)) {
      out.push(FIELD, escape(name))
      encodeInto(field, out)
    }
    out.push(END)
  } else if (typeof value === 'object' && typeof (value as { _bsontype?: unknown })._bsontype === 'string') {
    out.push(encodeBsonValue(value as { _bsontype: string }))
  } else if (value instanceof Uint8Array) {
    out.push(TypeMarker.binary, word(value.length), '\u0000', bytesKey(value))
  } else {
    out.push(TypeMarker.other, escape(String(value)))
  }
}

/**
 * The order-preserving key of one value (a flat string: built with join, since a string built by
 * `+` keeps its pieces alive). `undefined` (a missing field) is keyed like null.
 */
export function encodeKey(value: unknown): string {
  const out: string[] = []
  encodeInto(value, out)
  return out.join('')
}

/** The key of several values (a compound index key), as one flat string. */
export function encodeKeys(values: unknown[]): string {
  const out: string[] = []
  for (const value of values) encodeInto(value, out)
  return out.join('')
}

export function markerOf(key: string): string {
  return key.charAt(0)
}
