import { ProcessingMode, Query } from 'mingo'
import { isPlainObject, type Doc } from '../bson/codec.ts'
import { mongoError, toMongoError } from '../errors.ts'

export interface Matcher {
  readonly filter: Doc
  readonly empty: boolean
  test(doc: Doc): boolean
}

/** mingo options shared by every query: documents are ours (decoded per use), no cloning needed. */
export const MINGO_OPTIONS = { idKey: '_id', processingMode: ProcessingMode.CLONE_OFF, useStrictMode: true } as const

/** A compiled query filter. mingo's parse errors become MongoDB's (unknown operator, ...). */
export function compileFilter(filter: unknown, what = 'filter'): Matcher {
  if (filter === undefined || filter === null) filter = {}
  if (!isPlainObject(filter)) throw mongoError('TypeMismatch', `BSON field '${what}' is the wrong type, expected type 'object'`)
  const empty = Object.keys(filter).length === 0
  if (empty) return { filter, empty, test: () => true }
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
