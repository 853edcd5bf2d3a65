import { isPlainObject } from '../bson/codec.ts'

/** A value in the notation MongoDB uses inside error messages (`{ a: "x", n: 1 }`). */
export function formatValue(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  if (value instanceof Date) return `new Date(${value.getTime()})`
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `[ ${value.map(formatValue).join(', ')} ]`
  if (isPlainObject(value)) {
    const entries = Object.entries(value)
    return entries.length === 0 ? '{}' : `{ ${entries.map(([k, v]) => `${k}: ${formatValue(v)}`).join(', ')} }`
  }
  const tag = (value as { _bsontype?: unknown })._bsontype
  if (tag === 'ObjectId') return `ObjectId('${String(value)}')`
  if (typeof tag === 'string') return `${tag}(${String(value)})`
  return String(value)
}
