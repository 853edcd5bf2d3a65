import { BSONRegExp, deserialize, serialize } from 'bson'

export type Doc = Record<string, unknown>

/**
 * How stored and received bytes become JS values for mingo: int32/double/safe int64 become numbers
 * (the type is kept on the side, see numeric-types.ts), binaries stay Binary, regular expressions
 * become RegExp so that `{field: /x/}` filters work.
 */
const DECODE = { promoteValues: true, promoteLongs: true, promoteBuffers: false, bsonRegExp: false } as const
const DECODE_KEEP_REGEX = { ...DECODE, bsonRegExp: true } as const

export function decode(bytes: Uint8Array): Doc {
  try {
    return deserialize(bytes, DECODE)
  } catch (error) {
    // Regex flags JS does not know (x, l, s in old servers' data) can only be kept as BSONRegExp.
    if (error instanceof SyntaxError) return deserialize(bytes, DECODE_KEEP_REGEX)
    throw error
  }
}

export function encode(doc: Doc): Buffer {
  const bytes = serialize(doc, { ignoreUndefined: true })
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

export function isPlainObject(value: unknown): value is Doc {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

export function isRegExpValue(value: unknown): boolean {
  return value instanceof RegExp || value instanceof BSONRegExp
}

/** The BSON type name MongoDB uses in messages ("string", "int", "object", ...). */
export function bsonTypeName(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'missing'
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) <= 0x7fffffff ? 'int' : 'double'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'bool'
  if (Array.isArray(value)) return 'array'
  if (value instanceof Date) return 'date'
  if (isRegExpValue(value)) return 'regex'
  if (isPlainObject(value)) return 'object'
  const tag = (value as { _bsontype?: unknown })._bsontype
  if (typeof tag === 'string') return tag === 'ObjectId' ? 'objectId' : tag.charAt(0).toLowerCase() + tag.slice(1)
  return 'object'
}
