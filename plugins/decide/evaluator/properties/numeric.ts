import { toNumber } from './values.ts'

export type NumericOperator = 'gt' | 'gte' | 'lt' | 'lte'

/** Numeric only: both sides must read as f64, otherwise no match (there is no string comparison). */
export function compareNumbers(operator: NumericOperator, filterValue: unknown, propertyValue: unknown): boolean {
  const x = toNumber(propertyValue)
  const v = toNumber(filterValue)
  if (x === null || v === null) return false
  return ordered(operator, x, v)
}

/** compareNumbers with the filter's number read once (compiled filters); null when nothing matches. */
export function numberMatcher(
  operator: NumericOperator,
  filterValue: unknown,
): ((propertyValue: unknown) => boolean) | null {
  const v = toNumber(filterValue)
  if (v === null) return null
  return (propertyValue) => {
    const x = toNumber(propertyValue)
    return x !== null && ordered(operator, x, v)
  }
}

function ordered(operator: NumericOperator, x: number, v: number): boolean {
  switch (operator) {
    case 'gt':
      return x > v
    case 'gte':
      return x >= v
    case 'lt':
      return x < v
    case 'lte':
      return x <= v
  }
}

/**
 * Inclusive `[min, max]` range. Returns null when the filter or the value is
 * malformed: that is a matching error, a non-match for both `between` and
 * `not_between`.
 */
export function inRange(filterValue: unknown, propertyValue: unknown): boolean | null {
  if (!Array.isArray(filterValue) || filterValue.length !== 2) return null
  const low = toNumber(filterValue[0])
  const high = toNumber(filterValue[1])
  if (low === null || high === null || Number.isNaN(low) || Number.isNaN(high) || low > high) return null
  const x = toNumber(propertyValue)
  if (x === null || Number.isNaN(x)) return null
  return x >= low && x <= high
}
