import { expect } from 'chai'
import { evaluateFlags } from '../../../../plugins/decide/evaluator/evaluate.ts'
import type {
  ConditionSet,
  EvaluationInput,
  FlagDefinition,
  FlagFilters,
  FlagResult,
} from '../../../../plugins/decide/evaluator/types.ts'

let nextId = 1000

/** An active flag with the given filters; ids are unique unless given. */
export function flag(key: string, filters: FlagFilters, extra: Partial<FlagDefinition> = {}): FlagDefinition {
  return { id: nextId++, key, active: true, deleted: false, version: 1, filters, ...extra }
}

/** A flag with one condition set. */
export function simpleFlag(key: string, condition: ConditionSet, extra: Partial<FlagDefinition> = {}): FlagDefinition {
  return flag(key, { groups: [condition] }, extra)
}

export const NOW = Date.parse('2024-06-15T12:00:00Z')

/**
 * The compiled evaluation, checked against the reference interpreter on the same input: every
 * evaluator test that goes through here covers both (a difference throws).
 */
export function evaluate(flags: FlagDefinition[], input: Partial<EvaluationInput> = {}) {
  const full = { flags, distinctId: 'user-1', database: { status: 'skipped' as const }, now: NOW, ...input }
  const compiled = evaluateFlags(full)
  const interpreted = evaluateFlags({ ...full, interpret: true })
  expect(compiled, 'compiled evaluation against the interpreter').to.deep.equal(interpreted)
  return compiled
}

/** The single flag's result. */
export function evaluateOne(definition: FlagDefinition, input: Partial<EvaluationInput> = {}): FlagResult {
  const result = evaluate([definition], input).flags[definition.key]
  if (!result) throw new Error(`flag ${definition.key} is absent from the response`)
  return result
}

/** enabled/variant as the legacy shapes show it. */
export function valueOf(result: FlagResult): boolean | string {
  return result.enabled ? (result.variant ?? true) : false
}
