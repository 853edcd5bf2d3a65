import { toText } from './values.ts'

/** Booleans, the strings "true"/"false" in any case, or lists made only of those. */
export function isBooleanish(value: unknown): boolean {
  if (typeof value === 'boolean') return true
  if (typeof value === 'string') {
    const lower = value.toLowerCase()
    return lower === 'true' || lower === 'false'
  }
  if (Array.isArray(value)) return value.every(isBooleanish)
  return false
}

/** Truthy: true, "true" in any case, or a list whose elements are all truthy (an empty list is truthy). */
export function isTruthy(value: unknown): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') return value.toLowerCase() === 'true'
  if (Array.isArray(value)) return value.every(isTruthy)
  return false
}

/**
 * `exact`: boolean-ish filter values compare truthiness; lists match any
 * element; otherwise text equality after Unicode lowercasing (not casefold).
 */
export function exactMatch(filterValue: unknown, propertyValue: unknown): boolean {
  if (isBooleanish(filterValue)) return isTruthy(filterValue) === isTruthy(propertyValue)
  if (Array.isArray(filterValue)) {
    const target = toText(propertyValue).toLowerCase()
    return filterValue.some((candidate) => toText(candidate).toLowerCase() === target)
  }
  return toText(filterValue).toLowerCase() === toText(propertyValue).toLowerCase()
}
