import { Context, ProcessingMode, Query } from 'mingo'
import * as queryOperators from 'mingo/operators/query'
import { Query as BaseQuery } from 'mingo/query'
import { isPlainObject, isRegExpValue, type Doc } from '../bson/codec.ts'
import { mongoError, notSupported, toMongoError } from '../errors.ts'

export interface Matcher {
  readonly filter: Doc
  readonly empty: boolean
  test(doc: Doc): boolean
}

/** mingo options shared by every query: documents are ours (decoded per use), no cloning needed. */
export const MINGO_OPTIONS = { idKey: '_id', processingMode: ProcessingMode.CLONE_OFF, useStrictMode: true } as const

/** $type aliases that depend on the exact numeric type, which matching does not see. */
const NUMERIC_TYPES = new Set<unknown>(['int', 'long', 'double', 'decimal', 1, 16, 18, 19])

function checkTypeOperators(value: unknown, depth = 0): void {
  if (depth > 100 || typeof value !== 'object' || value === null) return
  if (Array.isArray(value)) {
    for (const item of value) checkTypeOperators(item, depth + 1)
    return
  }
  for (const [key, operand] of Object.entries(value)) {
    if (key === '$type') {
      const wanted = Array.isArray(operand) ? operand : [operand]
      const exact = wanted.find((t) => NUMERIC_TYPES.has(t))
      if (exact !== undefined)
        throw notSupported(`$type: ${JSON.stringify(exact)} (queries see int, long and double alike; use 'number')`)
    }
    checkTypeOperators(operand, depth + 1)
  }
}

/**
 * mingo copies its whole operator table into every query it builds (a few hundred entries, most
 * of the cost of a point lookup). Filters without aggregation expressions get a table of query
 * operators only.
 */
const QUERY_CONTEXT = Context.init({ query: queryOperators as unknown as Record<string, never> })
const NEEDS_EXPRESSIONS = new Set(['$expr', '$where', '$function', '$jsonSchema', '$accumulator'])

function usesExpressions(value: unknown, depth = 0): boolean {
  if (depth > 100 || typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) return value.some((v) => usesExpressions(v, depth + 1))
  if (!isPlainObject(value)) return false
  return Object.entries(value).some(([k, v]) => NEEDS_EXPRESSIONS.has(k) || usesExpressions(v, depth + 1))
}

function buildQuery(filter: Doc): { test(doc: Doc): boolean } {
  if (usesExpressions(filter)) return new Query(filter, MINGO_OPTIONS)
  return new BaseQuery(filter, { ...MINGO_OPTIONS, context: QUERY_CONTEXT })
}

/** A value compared by plain equality: a scalar, or an embedded document without operators. */
function isPlainValue(value: unknown, depth = 0): boolean {
  if (depth > 20) return false
  if (Array.isArray(value)) return value.every((item) => isPlainValue(item, depth + 1))
  if (isPlainObject(value))
    return Object.entries(value).every(([key, item]) => !key.startsWith('$') && isPlainValue(item, depth + 1))
  return !isRegExpValue(value)
}

/**
 * Field equalities and `$in` lists of plain values only (`{project_id: 1, distinct_id: {$in: [...]}}`,
 * the shape of nearly every lookup and versioned write the service makes): such a filter is always
 * valid, so building mingo's query can wait until a document must actually be tested, which an
 * index that answers the filter exactly never asks for.
 */
function isPlainEquality(filter: Doc): boolean {
  for (const key in filter) {
    if (key === '' || key.startsWith('$')) return false
    const condition = filter[key]
    if (isPlainObject(condition) && Object.keys(condition).some((k) => k.startsWith('$'))) {
      const ops = Object.keys(condition)
      if (ops.length !== 1) return false
      const operand = condition[ops[0]]
      if (
        ops[0] === '$eq'
          ? !isPlainValue(operand)
          : ops[0] !== '$in' || !Array.isArray(operand) || !operand.every((v) => isPlainValue(v))
      )
        return false
    } else if (!isPlainValue(condition)) return false
  }
  return true
}

type Scalar = string | number | boolean
const isScalar = (value: unknown): value is Scalar =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && !Number.isNaN(value))

/**
 * For a filter of top-level fields equal to strings, numbers or booleans (`{project_id: 1, id: 'x',
 * version: 3}`, a versioned write): the answer read straight off the document when the document's
 * values are scalars too, where MongoDB's equality is JavaScript's (an int and a double of one value
 * are equal, as are 0 and -0). Anything else (an array, a missing field, a long) answers undefined,
 * and mingo decides.
 */
function scalarEquality(filter: Doc): ((doc: Doc) => boolean | undefined) | undefined {
  const fields: Array<[string, Scalar]> = []
  for (const key in filter) {
    const value = filter[key]
    if (key.includes('.') || !isScalar(value)) return undefined
    fields.push([key, value])
  }
  return (doc) => {
    let unsure = false
    for (const [key, wanted] of fields) {
      const actual = Object.hasOwn(doc, key) ? doc[key] : undefined
      if (!isScalar(actual)) unsure = true
      else if (actual !== wanted) return false
    }
    return unsure ? undefined : true
  }
}

/** A compiled query filter. mingo's parse errors become MongoDB's (unknown operator, ...). */
export function compileFilter(filter: unknown, what = 'filter'): Matcher {
  if (filter === undefined || filter === null) filter = {}
  if (!isPlainObject(filter))
    throw mongoError('TypeMismatch', `BSON field '${what}' is the wrong type, expected type 'object'`)
  const empty = Object.keys(filter).length === 0
  if (empty) return { filter, empty, test: () => true }
  const plain = isPlainEquality(filter)
  if (!plain) checkTypeOperators(filter)
  let query: { test(doc: Doc): boolean } | undefined
  const build = (f: Doc) => {
    try {
      return buildQuery(f)
    } catch (error) {
      throw toMongoError(error)
    }
  }
  if (!plain) query = build(filter)
  const compiled = filter
  const quick = plain ? scalarEquality(filter) : undefined
  return {
    filter,
    empty,
    test(doc: Doc): boolean {
      const answer = quick?.(doc)
      if (answer !== undefined) return answer
      try {
        query ??= build(compiled)
        return query.test(doc)
      } catch (error) {
        throw toMongoError(error)
      }
    },
  }
}
