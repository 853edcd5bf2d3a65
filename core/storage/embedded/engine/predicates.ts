import { isPlainObject, isRegExpValue, type Doc } from '../bson/codec.ts'

/**
 * The parts of a filter an index can answer: per field, an equality (or $in) or a range.
 * Anything else in the filter is left to the full filter, which every candidate is re-checked
 * against, unless every part of the filter is one of these (then the index answer is exact).
 */
export interface FieldPredicate {
  /** Equality candidates ($eq, plain value, $in), or undefined if the field has a range only. */
  values?: unknown[]
  lower?: { value: unknown; inclusive: boolean }
  upper?: { value: unknown; inclusive: boolean }
}

export interface FilterAnalysis {
  fields: Map<string, FieldPredicate>
  /** True when the filter is nothing but the predicates above (no other operator, no $or...). */
  simple: boolean
}

const RANGE_OPS = new Set(['$gt', '$gte', '$lt', '$lte'])

/** Values an index key can stand for exactly: no arrays, no regexes, no operator objects. */
function isKeyable(value: unknown): boolean {
  if (Array.isArray(value) || isRegExpValue(value)) return false
  if (isPlainObject(value)) return !Object.keys(value).some((k) => k.startsWith('$'))
  return (
    typeof value !== 'object' ||
    value === null ||
    value instanceof Date ||
    typeof (value as { _bsontype?: unknown })._bsontype === 'string'
  )
}

function analyzeCondition(condition: unknown): { predicate?: FieldPredicate; simple: boolean } {
  if (!isPlainObject(condition) || !Object.keys(condition).some((k) => k.startsWith('$'))) {
    return isKeyable(condition) ? { predicate: { values: [condition] }, simple: true } : { simple: false }
  }
  const predicate: FieldPredicate = {}
  let simple = true
  for (const [op, operand] of Object.entries(condition)) {
    if (op === '$eq' && isKeyable(operand)) predicate.values = [operand]
    else if (op === '$in' && Array.isArray(operand) && operand.every(isKeyable)) predicate.values = operand
    else if (RANGE_OPS.has(op) && isKeyable(operand) && operand !== null && !isPlainObject(operand)) {
      const bound = { value: operand, inclusive: op.endsWith('e') }
      if (op.startsWith('$g')) predicate.lower = bound
      else predicate.upper = bound
      simple = false // a range may cross type brackets, which the key range does not model exactly
    } else simple = false
  }
  const useful = predicate.values !== undefined || predicate.lower !== undefined || predicate.upper !== undefined
  return useful ? { predicate, simple } : { simple: false }
}

export function analyzeFilter(filter: Doc): FilterAnalysis {
  const fields = new Map<string, FieldPredicate>()
  let simple = true
  const visit = (f: Doc): void => {
    for (const [key, condition] of Object.entries(f)) {
      if (key === '$and' && Array.isArray(condition)) {
        for (const part of condition) if (isPlainObject(part)) visit(part)
        continue
      }
      if (key.startsWith('$') || /(^|\.)\d+(\.|$)/.test(key)) {
        simple = false
        continue
      }
      const result = analyzeCondition(condition)
      simple &&= result.simple
      if (!result.predicate) continue
      if (fields.has(key)) {
        simple = false // two conditions on one field: keep the first for the index, re-check all
        continue
      }
      fields.set(key, result.predicate)
    }
  }
  visit(filter)
  return { fields, simple }
}
