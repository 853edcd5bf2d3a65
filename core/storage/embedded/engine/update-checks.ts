import { bsonTypeName, isPlainObject, type Doc } from '../bson/codec.ts'
import { mongoError } from '../errors.ts'
import { formatValue } from './format.ts'
import type { UpdateAction } from './update-parse.ts'

/**
 * Checks mongod makes while applying an operator to one document, which mingo would instead
 * skip silently: creating a field inside a scalar, $inc on a string, $push onto a non-array.
 * Only for paths without positional parts (those depend on which element matched).
 */
const CREATING_OPS = new Set([
  '$set',
  '$setOnInsert',
  '$inc',
  '$mul',
  '$min',
  '$max',
  '$push',
  '$addToSet',
  '$currentDate',
  '$bit',
])

function notViable(part: string, parentName: string, parent: unknown): Error {
  return mongoError('PathNotViable', `Cannot create field '${part}' in element {${parentName}: ${formatValue(parent)}}`)
}

/**
 * `a.$[]`, `a.$[x]` and `a.$` need an array at `a`; mingo would skip anything else silently.
 * (Only the first dynamic part is checked: deeper ones depend on each element.)
 */
export function checkArrayUpdate(doc: Doc, action: UpdateAction): void {
  const at = action.parts.findIndex((p) => p === '$' || (p.startsWith('$[') && p.endsWith(']')))
  if (at < 0) return
  let value: unknown = doc
  for (const part of action.parts.slice(0, at)) {
    value =
      Array.isArray(value) && /^\d+$/.test(part) ? value[Number(part)] : isPlainObject(value) ? value[part] : undefined
  }
  if (Array.isArray(value)) return
  const prefix = action.parts.slice(0, at).join('.')
  if (action.parts[at] === '$')
    throw mongoError('BadValue', 'The positional operator did not find the match needed from the query.')
  if (value === undefined)
    throw mongoError('BadValue', `The path '${prefix}' must exist in the document in order to apply array updates.`)
  throw mongoError(
    'BadValue',
    `Cannot apply array updates to non-array element ${action.parts[at - 1]}: ${formatValue(value)}`,
  )
}

export function checkAction(doc: Doc, action: UpdateAction): void {
  const { op, parts, path } = action
  let current: unknown = doc
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i]
    let next: unknown
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(part)) {
        if (CREATING_OPS.has(op)) throw notViable(part, parts[i - 1], current)
        return
      }
      next = current[Number(part)]
    } else if (isPlainObject(current)) {
      next = current[part]
    } else {
      return
    }
    if (next === undefined) return
    if (!isPlainObject(next) && !Array.isArray(next)) {
      if (CREATING_OPS.has(op)) throw notViable(parts[i + 1], part, next)
      return
    }
    current = next
  }
  const last = parts[parts.length - 1]
  if (Array.isArray(current) && !/^\d+$/.test(last)) {
    if (CREATING_OPS.has(op)) throw notViable(last, parts[parts.length - 2] ?? '', current)
    return
  }
  const value = Array.isArray(current) ? current[Number(last)] : (current as Doc)[last]
  if (value === undefined) return
  const type = bsonTypeName(value)
  const idShown = `{_id: ${formatValue(doc._id)}}`
  if ((op === '$inc' || op === '$mul') && typeof value !== 'number' && type !== 'long' && type !== 'decimal128') {
    throw mongoError(
      'TypeMismatch',
      `Cannot apply ${op} to a value of non-numeric type. ${idShown} has the field '${last}' of non-numeric type ${type}`,
    )
  }
  if ((op === '$push' || op === '$addToSet') && !Array.isArray(value)) {
    throw mongoError('BadValue', `The field '${path}' must be an array but is of type ${type} in document ${idShown}`)
  }
  if ((op === '$pull' || op === '$pullAll') && !Array.isArray(value)) {
    throw mongoError('BadValue', 'Cannot apply $pull to a non-array value')
  }
  if (op === '$pop' && !Array.isArray(value)) {
    throw mongoError('TypeMismatch', `Path '${path}' contains an element of non-array type '${type}'`)
  }
  if (op === '$bit' && !(typeof value === 'number' && Number.isInteger(value)) && type !== 'long') {
    throw mongoError(
      'BadValue',
      `Cannot apply $bit to a value of non-integral type.${idShown} has the field ${last} of non-integer type ${type}`,
    )
  }
}
