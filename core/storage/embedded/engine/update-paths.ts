import { mongoError } from '../errors.ts'

/**
 * The checks mongod makes on the paths of an operator update before touching any document
 * (update_object_node.cpp, field_checker.cpp): empty parts, positional operators, array filter
 * identifiers, and two paths that would update the same place.
 */
export const isPositional = (part: string) => part === '$'
export const isArrayFilter = (part: string) => part.length >= 3 && part.startsWith('$[') && part.endsWith(']')

export function validateUpdatePath(path: string, arrayFilterIds: Set<string>): string[] {
  if (path === '') throw mongoError('EmptyFieldName', 'An empty update path is not valid.')
  const parts = path.split('.')
  if (parts.some((p) => p === '')) {
    throw mongoError('EmptyFieldName', `The update path '${path}' contains an empty field name, which is not allowed.`)
  }
  const positional = parts.filter(isPositional).length
  if (positional > 1) throw mongoError('BadValue', `Too many positional (i.e. '$') elements found in path '${path}'`)
  if (isPositional(parts[0])) {
    throw mongoError('BadValue', `Cannot have positional (i.e. '$') element in the first position in path '${path}'`)
  }
  // Stricter than MongoDB 5.0+, which accepts a nested `$` name here; MongoDB 4.4 and earlier refuse
  // it. Refusing keeps code that passes on the embedded server portable to every server version.
  const dollar = parts.find((part, i) => i > 0 && part.startsWith('$') && !isPositional(part) && !isArrayFilter(part))
  if (dollar !== undefined) {
    throw mongoError(
      'DollarPrefixedFieldName',
      `The dollar ($) prefixed field '${dollar}' in '${path}' is not valid for storage.`,
    )
  }
  parts.forEach((part, i) => {
    if (!isArrayFilter(part)) return
    if (i === 0) {
      throw mongoError(
        'BadValue',
        `Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '${path}'`,
      )
    }
    const id = part.slice(2, -1)
    if (id !== '' && !arrayFilterIds.has(id))
      throw mongoError('BadValue', `No array filter found for identifier '${id}' in path '${path}'`)
  })
  return parts
}

interface Node {
  children: Map<string, Node>
  leaf: boolean
}

/** Detects two update paths that overlap ({a: 1, 'a.b': 2}), with mongod's message. */
export class ConflictDetector {
  private readonly root: Node = { children: new Map(), leaf: false }

  add(path: string, parts: string[]): void {
    let node = this.root
    for (let i = 0; i < parts.length; i++) {
      let child = node.children.get(parts[i])
      if (child?.leaf || (child && i === parts.length - 1)) {
        const at = child.leaf ? parts.slice(0, i + 1).join('.') : path
        throw mongoError('ConflictingUpdateOperators', `Updating the path '${path}' would create a conflict at '${at}'`)
      }
      if (!child) {
        child = { children: new Map(), leaf: i === parts.length - 1 }
        node.children.set(parts[i], child)
      }
      node = child
    }
  }
}

/** The identifiers declared by arrayFilters ([{'x.a': 1}, {y: 2}] declares x and y). */
export function arrayFilterIdentifiers(arrayFilters: unknown): Set<string> {
  const ids = new Set<string>()
  if (arrayFilters === undefined) return ids
  if (!Array.isArray(arrayFilters))
    throw mongoError('TypeMismatch', "BSON field 'arrayFilters' is the wrong type, expected type 'array'")
  for (const filter of arrayFilters) {
    if (typeof filter !== 'object' || filter === null) throw mongoError('TypeMismatch', 'arrayFilters must be objects')
    const names = new Set(Object.keys(filter).map((k) => k.split('.')[0]))
    if (names.size !== 1) {
      throw mongoError(
        'FailedToParse',
        `Error parsing array filter :: caused by :: Expected a single top-level field name, found ${[...names].map((n) => `'${n}'`).join(' and ')}`,
      )
    }
    const [id] = names
    if (!/^[a-z][a-zA-Z0-9]*$/.test(id)) {
      throw mongoError(
        'BadValue',
        `Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '${id}'`,
      )
    }
    if (ids.has(id))
      throw mongoError('FailedToParse', `Found multiple array filters with the same top-level field name ${id}`)
    ids.add(id)
  }
  return ids
}
