import { isPlainObject, type Doc } from '../bson/codec.ts'
import { mongoError } from '../errors.ts'

function setPath(doc: Doc, path: string, value: unknown): void {
  const parts = path.split('.')
  let current = doc
  for (const part of parts.slice(0, -1)) {
    const next = current[part]
    if (next === undefined) current = current[part] = {}
    else if (isPlainObject(next)) current = next
    else throw mongoError('NotSingleValueField', `cannot infer query fields to set, path '${path}' is matched twice`)
  }
  current[parts[parts.length - 1]] = value
}

function equalityValue(condition: unknown): { value: unknown } | undefined {
  if (!isPlainObject(condition) || !Object.keys(condition).some((k) => k.startsWith('$'))) return { value: condition }
  if ('$eq' in condition) return { value: condition.$eq }
  if (Array.isArray(condition.$in) && condition.$in.length === 1) return { value: condition.$in[0] }
  return undefined
}

/**
 * The document an upsert starts from: the filter's equality conditions (top level and inside
 * $and), as mongod derives it. Other operators contribute nothing.
 */
export function upsertSeed(filter: Doc): Doc {
  const seed: Doc = {}
  const visit = (f: Doc): void => {
    for (const [key, condition] of Object.entries(f)) {
      if (key === '$and' && Array.isArray(condition)) {
        for (const part of condition) if (isPlainObject(part)) visit(part)
        continue
      }
      if (key.startsWith('$')) continue
      const eq = equalityValue(condition)
      if (eq) setPath(seed, key, eq.value)
    }
  }
  visit(filter)
  return seed
}
