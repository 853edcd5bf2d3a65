import { isPlainObject, type Doc } from '../bson/codec.ts'
import { mongoError, notSupported } from '../errors.ts'

/** An index as listIndexes reports it and as the data folder stores it. */
export interface IndexSpec {
  v: number
  key: Record<string, number>
  name: string
  unique?: boolean
  sparse?: boolean
  partialFilterExpression?: Doc
  expireAfterSeconds?: number
  hidden?: boolean
}

export interface IndexField {
  path: string
  direction: 1 | -1
}

const KNOWN_OPTIONS = new Set([
  'key',
  'name',
  'v',
  'unique',
  'sparse',
  'partialFilterExpression',
  'expireAfterSeconds',
  'hidden',
  'background',
  'ns',
])

/** MongoDB's default index name: field_direction pairs joined by "_". */
export function defaultIndexName(key: Record<string, unknown>): string {
  return Object.entries(key)
    .map(([field, direction]) => `${field}_${String(direction)}`)
    .join('_')
}

export function indexFields(spec: IndexSpec): IndexField[] {
  return Object.entries(spec.key).map(([path, direction]) => ({ path, direction: direction < 0 ? -1 : 1 }))
}

/** Validates one entry of createIndexes' `indexes` the way mongod does, for what we support. */
export function parseIndexSpec(raw: unknown): IndexSpec {
  if (!isPlainObject(raw)) throw mongoError('TypeMismatch', "The field 'indexes' must be an array of objects")
  const key = raw.key
  if (!isPlainObject(key) || Object.keys(key).length === 0) {
    throw mongoError('CannotCreateIndex', 'Index keys cannot be empty.')
  }
  for (const [field, direction] of Object.entries(key)) {
    if (typeof direction === 'string') throw notSupported(`index type '${direction}' (on field '${field}')`)
    if (typeof direction !== 'number' || direction === 0 || Number.isNaN(direction)) {
      throw mongoError(
        'CannotCreateIndex',
        `Values in the index key pattern can only be numbers or strings; found ${String(direction)} for field '${field}'`,
      )
    }
    if (field === '' || field.split('.').some((part) => part === '')) {
      throw mongoError('CannotCreateIndex', `Index keys cannot contain an empty field name: '${field}'`)
    }
    if (field.startsWith('$'))
      throw mongoError('CannotCreateIndex', `Index key contains an illegal field name: field name starts with '$'.`)
  }
  for (const option of Object.keys(raw)) {
    if (
      option === 'collation' ||
      option === 'weights' ||
      option === 'wildcardProjection' ||
      option === 'storageEngine'
    ) {
      throw notSupported(`the index option '${option}'`)
    }
    if (!KNOWN_OPTIONS.has(option)) {
      throw mongoError(
        'InvalidIndexSpecificationOption',
        `The field '${option}' is not valid for an index specification. Specification: ${JSON.stringify(raw)}`,
      )
    }
  }
  const name = raw.name === undefined ? defaultIndexName(key) : raw.name
  if (typeof name !== 'string' || name === '')
    throw mongoError('CannotCreateIndex', 'The index name must be a non-empty string')
  const spec: IndexSpec = { v: 2, key: normalizeKey(key), name }
  if (raw.unique !== undefined && raw.unique !== false) spec.unique = Boolean(raw.unique)
  if (raw.sparse !== undefined && raw.sparse !== false) spec.sparse = Boolean(raw.sparse)
  if (raw.hidden !== undefined && raw.hidden !== false) spec.hidden = Boolean(raw.hidden)
  if (raw.partialFilterExpression !== undefined) {
    if (!isPlainObject(raw.partialFilterExpression))
      throw mongoError('TypeMismatch', 'partialFilterExpression must be an object')
    spec.partialFilterExpression = raw.partialFilterExpression
  }
  if (raw.expireAfterSeconds !== undefined) spec.expireAfterSeconds = parseTtl(raw.expireAfterSeconds, spec)
  if (spec.unique && name === '_id_')
    throw mongoError('BadValue', "The field 'unique' is not valid for an _id index specification.")
  return spec
}

function normalizeKey(key: Doc): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [field, direction] of Object.entries(key)) out[field] = direction as number
  return out
}

function parseTtl(value: unknown, spec: IndexSpec): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 2147483647) {
    throw mongoError(
      'CannotCreateIndex',
      `TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number; found ${String(value)}`,
    )
  }
  if (Object.keys(spec.key).length !== 1) {
    throw mongoError('CannotCreateIndex', 'TTL indexes are single-field indexes, compound indexes do not support TTL.')
  }
  return Math.floor(value)
}

/** The fields that must match for createIndexes to treat two specs as the same index. */
export function sameIndexOptions(a: IndexSpec, b: IndexSpec): boolean {
  return (
    Boolean(a.unique) === Boolean(b.unique) &&
    Boolean(a.sparse) === Boolean(b.sparse) &&
    JSON.stringify(a.partialFilterExpression ?? null) === JSON.stringify(b.partialFilterExpression ?? null) &&
    a.expireAfterSeconds === b.expireAfterSeconds
  )
}

export function sameKey(a: Record<string, number>, b: Record<string, unknown>): boolean {
  const ea = Object.entries(a)
  const eb = Object.entries(b)
  return ea.length === eb.length && ea.every(([field, dir], i) => eb[i][0] === field && Number(eb[i][1]) === dir)
}
