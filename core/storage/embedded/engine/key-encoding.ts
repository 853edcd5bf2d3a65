import { isPlainObject, isRegExpValue } from '../bson/codec.ts'

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

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0')
}

function sortableNumber(n: number): string {
  if (Number.isNaN(n)) return '0000000000000000'
  float[0] = n === 0 ? 0 : n
  let hi = words[1]
  let lo = words[0]
  if (hi & 0x80000000) {
    hi = ~hi >>> 0
    lo = ~lo >>> 0
  } else {
    hi = (hi | 0x80000000) >>> 0
  }
  return hex8(hi) + hex8(lo)
}

/** Strings end with END; the characters END and \u0001 are escaped so they never end one early. */
function escape(s: string): string {
  if (!/[\u0000\u0001]/.test(s)) return s + END
  return s.replace(/\u0001/g, '\u0001\u0002').replace(/\u0000/g, '\u0001\u0001') + END
}

function bytesHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}

function encodeBsonValue(value: { _bsontype: string }): string {
  const v = value as unknown as Record<string, unknown>
  switch (value._bsontype) {
    case 'ObjectId':
      return TypeMarker.objectId + (v as unknown as { toHexString(): string }).toHexString()
    case 'Long':
    case 'Int32':
    case 'Double':
    case 'Decimal128':
      return TypeMarker.number + sortableNumber(Number(String(value)))
    case 'Binary': {
      const binary = value as unknown as { buffer: Uint8Array; sub_type: number; position: number }
      const bytes = binary.buffer.subarray(0, binary.position)
      return TypeMarker.binary + hex8(bytes.length) + binary.sub_type.toString(16).padStart(2, '0') + bytesHex(bytes)
    }
    case 'Timestamp': {
      const ts = value as unknown as { t: number; i: number }
      return TypeMarker.timestamp + hex8(ts.t) + hex8(ts.i)
    }
    case 'MinKey':
      return TypeMarker.minKey
    case 'MaxKey':
      return TypeMarker.maxKey
    case 'BSONRegExp':
      return TypeMarker.regex + escape(String(v.pattern)) + escape(String(v.options))
    case 'BSONSymbol':
      return TypeMarker.string + escape(String(v.value))
    default:
      return TypeMarker.other + escape(value._bsontype) + escape(JSON.stringify(v))
  }
}

/** The order-preserving key of one value. `undefined` (a missing field) is keyed like null. */
export function encodeKey(value: unknown): string {
  if (value === null || value === undefined) return TypeMarker.nullish
  switch (typeof value) {
    case 'number':
      return TypeMarker.number + sortableNumber(value)
    case 'bigint':
      return TypeMarker.number + sortableNumber(Number(value))
    case 'string':
      return TypeMarker.string + escape(value)
    case 'boolean':
      return TypeMarker.boolean + (value ? '1' : '0')
    default:
      break
  }
  if (value instanceof Date) return TypeMarker.date + sortableNumber(value.getTime())
  if (Array.isArray(value)) return TypeMarker.array + value.map((item) => FIELD + encodeKey(item)).join('') + END
  if (isRegExpValue(value) && value instanceof RegExp) return TypeMarker.regex + escape(value.source) + escape(value.flags)
  if (isPlainObject(value)) {
    let out: string = TypeMarker.object
    for (const [name, field] of Object.entries(value)) out += FIELD + escape(name) + encodeKey(field)
    return out + END
  }
  if (typeof value === 'object' && typeof (value as { _bsontype?: unknown })._bsontype === 'string') {
    return encodeBsonValue(value as { _bsontype: string })
  }
  if (value instanceof Uint8Array) return TypeMarker.binary + hex8(value.length) + '00' + bytesHex(value)
  return TypeMarker.other + escape(String(value))
}

/** The key range covering every value of the type marked by `marker`. */
export function typeRange(marker: string): [string, string] {
  return [marker, marker + KEY_MAX]
}

export function markerOf(key: string): string {
  return key.charAt(0)
}
