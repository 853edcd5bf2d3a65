import type { Doc } from '../bson/codec.ts'
import { numberAt, type NumericHints, type NumericKind } from '../bson/numeric-types.ts'
import type { UpdateAction } from './update-parse.ts'

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}.`)

function combine(a: NumericKind | undefined, b: NumericKind | undefined): NumericKind | undefined {
  if (a === 'double' || b === 'double') return 'double'
  if (a === 'long' || b === 'long') return 'long'
  return undefined
}

/**
 * The numeric kinds of the updated document: the old document's, where a number is still there,
 * overridden by the kinds of the values the operators wrote (operand hints are keyed
 * "<op>.<path>", as numericHints() reports them for the raw update document).
 */
export function mergeHints(
  before: Doc,
  after: Doc,
  oldHints: NumericHints,
  operandHints: NumericHints,
  actions: UpdateAction[],
  inserting: boolean,
): NumericHints {
  const result: NumericHints = new Map()
  for (const [path, kind] of oldHints) if (numberAt(after, path) !== undefined) result.set(path, kind)
  for (const action of actions) {
    if (action.dynamic) continue
    const { op, path } = action
    const prefix = `${op}.${path}`
    if (op === '$set' || (op === '$setOnInsert' && inserting)) {
      for (const p of [...result.keys()]) if (under(p, path)) result.delete(p)
      for (const [p, kind] of operandHints) if (under(p, prefix)) result.set(path + p.slice(prefix.length), kind)
    } else if (op === '$inc' || op === '$mul') {
      const kind = combine(result.get(path), operandHints.get(prefix))
      if (kind) result.set(path, kind)
    } else if (op === '$min' || op === '$max') {
      if (numberAt(before, path) !== numberAt(after, path)) {
        const kind = operandHints.get(prefix)
        if (kind) result.set(path, kind)
        else result.delete(path)
      }
    } else if (op === '$rename' && typeof action.value === 'string') {
      const target = action.value
      for (const p of [...result.keys()]) if (under(p, target)) result.delete(p)
      for (const [p, kind] of oldHints) if (under(p, path)) result.set(target + p.slice(path.length), kind)
    }
  }
  for (const [path] of result) if (numberAt(after, path) === undefined) result.delete(path)
  return result
}
