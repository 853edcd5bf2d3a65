import { bsonTypeName, isPlainObject, type Doc } from '../bson/codec.ts'
import { mongoError } from '../errors.ts'
import { formatValue } from './format.ts'
import {
  arrayFilterIdentifiers,
  ConflictDetector,
  isArrayFilter,
  isPositional,
  validateUpdatePath,
} from './update-paths.ts'
import { validatePipelineUpdate } from './update-pipeline.ts'

export const UPDATE_OPERATORS = new Set([
  '$set',
  '$unset',
  '$inc',
  '$mul',
  '$min',
  '$max',
  '$rename',
  '$currentDate',
  '$push',
  '$pull',
  '$pullAll',
  '$pop',
  '$addToSet',
  '$bit',
  '$setOnInsert',
])

/** One `path: value` of one operator, validated. */
export interface UpdateAction {
  op: string
  path: string
  parts: string[]
  value: unknown
  /** Uses `$`, `$[]` or `$[id]`: the target depends on the document. */
  dynamic: boolean
}

export type ParsedUpdate =
  | { kind: 'operators'; actions: UpdateAction[]; arrayFilters: Doc[]; positional: boolean }
  | { kind: 'replacement'; doc: Doc }
  | { kind: 'pipeline'; stages: Doc[] }

const NUMERIC_OPS = new Set(['$inc', '$mul'])

function checkValue(op: string, path: string, value: unknown): void {
  if (NUMERIC_OPS.has(op) && typeof value !== 'number' && !isNumericBson(value)) {
    const verb = op === '$inc' ? 'increment' : 'multiply'
    throw mongoError('TypeMismatch', `Cannot ${verb} with non-numeric argument: {${path}: ${formatValue(value)}}`)
  }
  if (op === '$pop' && value !== 1 && value !== -1) {
    throw mongoError('FailedToParse', `$pop expects 1 or -1, found: ${formatValue(value)}`)
  }
  if (op === '$currentDate') {
    const ok =
      value === true ||
      value === false ||
      (isPlainObject(value) &&
        Object.keys(value).length === 1 &&
        (value.$type === 'date' || value.$type === 'timestamp'))
    if (!ok) {
      throw mongoError(
        'BadValue',
        `${formatValue(value)} is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).`,
      )
    }
  }
  if (op === '$pullAll' && !Array.isArray(value)) {
    throw mongoError('BadValue', `$pullAll requires an array argument but was given a ${bsonTypeName(value)}`)
  }
}

function isNumericBson(value: unknown): boolean {
  const tag = (value as { _bsontype?: unknown } | null)?._bsontype
  return tag === 'Long' || tag === 'Int32' || tag === 'Double' || tag === 'Decimal128'
}

function parseOperators(update: Doc, arrayFiltersRaw: unknown): ParsedUpdate {
  const ids = arrayFilterIdentifiers(arrayFiltersRaw)
  const used = new Set<string>()
  const conflicts = new ConflictDetector()
  const actions: UpdateAction[] = []
  for (const [op, fields] of Object.entries(update)) {
    if (!UPDATE_OPERATORS.has(op)) {
      throw mongoError(
        'FailedToParse',
        `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`,
      )
    }
    if (!isPlainObject(fields)) {
      throw mongoError(
        'FailedToParse',
        `Modifiers operate on fields but we found type ${bsonTypeName(fields)} instead. For example: {$mod: {<field>: ...}} not {${op}: ${formatValue(fields)}}`,
      )
    }
    for (const [path, value] of Object.entries(fields)) {
      const parts = validateUpdatePath(path, ids)
      for (const part of parts) if (isArrayFilter(part)) used.add(part.slice(2, -1))
      checkValue(op, path, value)
      const dynamic = parts.some((p) => isPositional(p) || isArrayFilter(p))
      conflicts.add(path, parts)
      if (op === '$rename') {
        if (typeof value !== 'string')
          throw mongoError('BadValue', `The 'to' field for $rename must be a string: ${path}: ${formatValue(value)}`)
        if (dynamic) throw mongoError('BadValue', `The source field for $rename may not be dynamic: ${path}`)
        const targetParts = validateUpdatePath(value, ids)
        if (targetParts.some((p) => isPositional(p) || isArrayFilter(p)))
          throw mongoError('BadValue', `The destination field for $rename may not be dynamic: ${value}`)
        if (value === path)
          throw mongoError(
            'BadValue',
            `The source and target field for $rename must differ: ${path}: ${formatValue(value)}`,
          )
        conflicts.add(value, targetParts)
      }
      actions.push({ op, path, parts, value, dynamic })
    }
  }
  for (const id of ids) {
    if (!used.has(id))
      throw mongoError(
        'FailedToParse',
        `The array filter for identifier '${id}' was not used in the update ${formatValue(update)}`,
      )
  }
  const arrayFilters = (Array.isArray(arrayFiltersRaw) ? arrayFiltersRaw : []) as Doc[]
  return { kind: 'operators', actions, arrayFilters, positional: actions.some((a) => a.parts.some(isPositional)) }
}

/** Classifies and validates the `u` of an update statement (or findAndModify's `update`). */
export function parseUpdate(update: unknown, arrayFilters: unknown): ParsedUpdate {
  if (Array.isArray(update)) {
    if (arrayFilters !== undefined)
      throw mongoError('FailedToParse', 'arrayFilters may not be specified for pipeline-style updates')
    validatePipelineUpdate(update)
    return { kind: 'pipeline', stages: update as Doc[] }
  }
  if (!isPlainObject(update)) throw mongoError('FailedToParse', 'Update argument must be either an object or an array')
  const first = Object.keys(update)[0]
  if (first?.startsWith('$')) return parseOperators(update, arrayFilters)
  if (arrayFilters !== undefined && Array.isArray(arrayFilters) && arrayFilters.length > 0) {
    throw mongoError('FailedToParse', 'arrayFilters may not be specified for replacement-style updates')
  }
  return { kind: 'replacement', doc: update }
}

/** Top-level `$` names are refused in what an update stores (storage_validation.cpp). */
export function dollarPrefixedTopLevelError(field: string): Error {
  return mongoError(
    'DollarPrefixedFieldName',
    `The dollar ($) prefixed field '${field}' in '${field}' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.`,
  )
}
