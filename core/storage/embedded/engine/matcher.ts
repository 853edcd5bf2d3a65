import { ProcessingMode, Query } from 'mingo'
import { isPlainObject, type Doc } from '../bson/codec.ts'
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
      if (exact !== undefined) throw notSupported(`$type: ${JSON.stringify(exact)} (queries see int, long and double alike; use 'number')`)
    }
    checkTypeOperators(operand, depth + 1)
  }
}

/** A compiled query filter. mingo's parse errors become MongoDB's (unknown operator, ...). */
export function compileFilter(filter: unknown, what = 'filter'): Matcher {
  if (filter === undefined || filter === null) filter = {}
  if (!isPlainObject(filter)) throw mongoError('TypeMismatch', `BSON field '${what}' is the wrong type, expected type 'object'`)
  const empty = Object.keys(filter).length === 0
  if (empty) return { filter, empty, test: () => true }
  checkTypeOperators(filter)
  let query: Query
  try {
    query = new Query(filter, MINGO_OPTIONS)
  } catch (error) {
    throw toMongoError(error)
  }
  return {
    filter,
    empty,
    test(doc: Doc): boolean {
      try {
        return query.test(doc)
      } catch (error) {
        throw toMongoError(error)
      }
    },
  }
}
