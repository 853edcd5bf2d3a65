/**
 * Flag filters and condition sets in words, for the dry run's explanations (explain.ts):
 * `plan exact ["pro"] and in cohort 7, rollout 30%`.
 */
import { conditionAggregation } from './conditions.ts'
import { dependencyTarget, isFlagFilter, type FlagLookup } from './dependencies.ts'
import type { ConditionSet, EvaluationInput, FlagDefinition, PropertyFilter } from './types.ts'

export const text = (value: unknown) => JSON.stringify(value) ?? 'undefined'

export function groupName(index: number | null | undefined, mapping: EvaluationInput['groupTypeMapping']): string {
  if (index === null || index === undefined) return 'group'
  return mapping?.[String(index)] ?? `group type ${index}`
}

export function flagName(filter: PropertyFilter, lookup: FlagLookup): string {
  const target = dependencyTarget(filter, lookup)
  return target === 'missing' ? filter.key : (lookup.byId.get(target)?.key ?? filter.key)
}

export function describeFilter(
  filter: PropertyFilter,
  lookup: FlagLookup,
  mapping: EvaluationInput['groupTypeMapping'],
): string {
  if (isFlagFilter(filter)) {
    const wanted = filter.value === true ? 'enabled' : filter.value === false ? 'disabled' : text(filter.value)
    return `flag "${flagName(filter, lookup)}" is ${wanted}`
  }
  if (filter.type === 'cohort') return `${filter.operator === 'not_in' ? 'not in' : 'in'} cohort ${text(filter.value)}`
  const operator = filter.operator ?? 'exact'
  const subject = filter.type === 'group' ? `${groupName(filter.group_type_index, mapping)} ` : ''
  const value = operator === 'is_set' || operator === 'is_not_set' ? '' : ` ${text(filter.value)}`
  return `${subject}${filter.key} ${operator}${value}`
}

/** A condition set in words: its filters, its rollout and its variant override. */
export function describeCondition(
  flag: FlagDefinition,
  condition: ConditionSet,
  lookup: FlagLookup,
  mapping: EvaluationInput['groupTypeMapping'],
): string {
  const own = (condition as { description?: unknown }).description
  if (typeof own === 'string' && own.trim() !== '') return own
  const filters = (condition.properties ?? []).map((filter) => describeFilter(filter, lookup, mapping))
  const aggregation = conditionAggregation(flag, condition)
  const parts = [filters.length ? filters.join(' and ') : 'everyone']
  if (aggregation !== null) parts.push(`by ${groupName(aggregation, mapping)}`)
  parts.push(`rollout ${condition.rollout_percentage ?? 100}%`)
  if (condition.variant) parts.push(`variant ${condition.variant}`)
  return parts.join(', ')
}
