import { isPlainObject, type Doc } from '../bson/codec.ts'
import { ErrorCode, mongoError, MongoServerError } from '../errors.ts'

const PIPELINE_UPDATE_STAGES = new Set(['$addFields', '$set', '$project', '$unset', '$replaceRoot', '$replaceWith'])

/** Field paths written by $set/$addFields/$project stages: no empty and no `$`-prefixed parts. */
export function validateFieldPath(path: string): void {
  for (const part of path.split('.')) {
    if (part === '') throw new MongoServerError(15998, 'FieldPath field names may not be empty strings.')
    if (part.startsWith('$')) {
      throw new MongoServerError(
        ErrorCode.Location16410,
        "FieldPath field names may not start with '$'. Consider using $getField or $setField.",
      )
    }
  }
}

const FIELD_OPERATORS = new Set(['$getField', '$setField', '$unsetField'])

/**
 * $getField/$setField/$unsetField exist to reach names a path cannot ("$browser", "a.b"), so their
 * `field` must be a constant: a string that is not itself a field path, or a $literal.
 * mingo would evaluate "$browser" as a path and quietly use whatever it finds.
 */
function checkFieldOperator(op: string, args: unknown): void {
  const field = isPlainObject(args) ? args.field : op === '$getField' ? args : undefined
  const constant =
    (typeof field === 'string' && !field.startsWith('$')) ||
    (isPlainObject(field) && Object.keys(field).length === 1 && typeof field.$literal === 'string')
  if (!constant) {
    throw mongoError(
      'BadValue',
      `${op} requires 'field' to evaluate to a constant string, but got ${JSON.stringify(field)}; wrap names starting with '$' in {$literal: ...}`,
    )
  }
}

/** Walks an expression tree checking the operators whose misuse mingo would not report. */
export function validateExpression(expr: unknown, depth = 0): void {
  if (depth > 150) return
  if (Array.isArray(expr)) {
    for (const item of expr) validateExpression(item, depth + 1)
    return
  }
  if (!isPlainObject(expr)) return
  for (const [key, value] of Object.entries(expr)) {
    if (FIELD_OPERATORS.has(key)) checkFieldOperator(key, value)
    if (key === '$literal') continue
    validateExpression(value, depth + 1)
  }
}

export function validatePipelineUpdate(stages: unknown[]): void {
  for (const stage of stages) {
    if (!isPlainObject(stage) || Object.keys(stage).length !== 1) {
      throw mongoError('TypeMismatch', 'Each element of the update pipeline must be an object with exactly one stage')
    }
    const [name] = Object.keys(stage)
    if (!PIPELINE_UPDATE_STAGES.has(name)) {
      throw mongoError('InvalidOptions', `${name} is not allowed to be used within an update`)
    }
    const spec = (stage as Doc)[name]
    if ((name === '$set' || name === '$addFields') && isPlainObject(spec)) {
      for (const path of Object.keys(spec)) validateFieldPath(path)
    }
    validateExpression(spec)
  }
}
