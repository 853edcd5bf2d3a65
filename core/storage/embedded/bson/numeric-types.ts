import { Double, Long } from 'bson'
import { BsonType, elementsOf } from './raw.ts'

/**
 * Queries and updates run on documents whose int32, int64 and double values are all JS numbers
 * (that is what mingo understands). Serialising a number gives back int32 when it is integral and
 * fits, double otherwise, so two kinds of values would silently change type on an update: int64
 * values and integral doubles. A hint remembers, by path, which of those a value was.
 */
export type NumericKind = 'long' | 'double'
export type NumericHints = Map<string, NumericKind>

const INT32_MIN = -0x80000000
const INT32_MAX = 0x7fffffff

/** Paths (dotted, array indexes included) of the values in `bytes` that need a hint. */
export function numericHints(bytes: Uint8Array, offset = 0, prefix = '', out: NumericHints = new Map()): NumericHints {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (const element of elementsOf(bytes, offset)) {
    const path = prefix + element.name
    if (element.type === BsonType.int64) {
      out.set(path, 'long')
    } else if (element.type === BsonType.double) {
      const value = view.getFloat64(element.valueStart, true)
      if (Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX) out.set(path, 'double')
    } else if (element.type === BsonType.document || element.type === BsonType.array) {
      numericHints(bytes, element.valueStart, `${path}.`, out)
    }
  }
  return out
}

type Container = Record<string, unknown> | unknown[]

function isContainer(value: unknown): value is Container {
  return (
    typeof value === 'object' &&
    value !== null &&
    (Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype)
  )
}

function parentOf(doc: Record<string, unknown>, path: string): [Container, string] | undefined {
  const parts = path.split('.')
  let current: unknown = doc
  for (let i = 0; i < parts.length - 1; i++) {
    if (!isContainer(current)) return undefined
    current = Array.isArray(current) ? current[Number(parts[i])] : current[parts[i]]
  }
  return isContainer(current) ? [current, parts[parts.length - 1]] : undefined
}

/** The number at `path`, if there is one. */
export function numberAt(doc: Record<string, unknown>, path: string): number | undefined {
  const found = parentOf(doc, path)
  if (!found) return undefined
  const [parent, key] = found
  const value = Array.isArray(parent) ? parent[Number(key)] : parent[key]
  return typeof value === 'number' ? value : undefined
}

/** Wraps hinted numbers in place, so that serialising `doc` writes them with their own type. */
export function applyNumericHints(doc: Record<string, unknown>, hints: NumericHints): void {
  for (const [path, kind] of hints) {
    const found = parentOf(doc, path)
    if (!found) continue
    const [parent, key] = found
    const index: string | number = Array.isArray(parent) ? Number(key) : key
    const value = (parent as Record<string | number, unknown>)[index]
    if (typeof value !== 'number') continue
    if (kind === 'long' && Number.isSafeInteger(value))
      (parent as Record<string | number, unknown>)[index] = Long.fromNumber(value)
    else if (kind === 'double') (parent as Record<string | number, unknown>)[index] = new Double(value)
  }
}
