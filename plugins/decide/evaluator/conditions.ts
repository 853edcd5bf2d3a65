import { cohortFiltersMatch } from './cohorts.ts'
import type { RequestContext } from './context.ts'
import { dependencyTarget, flagValueMatches, isFlagFilter } from './dependencies.ts'
import { hashFor } from './hash.ts'
import { hashedIdentifier } from './identifiers.ts'
import { matchProperty } from './properties/match-property.ts'
import { isFullRollout, isInRollout } from './rollout.ts'
import type { ConditionSet, FlagDefinition, Properties, PropertyFilter } from './types.ts'

export type ConditionOutcome = 'condition_match' | 'out_of_rollout_bound' | 'no_condition_match'

/**
 * What an explanation (explain.ts) is told while a condition set is evaluated: which filter
 * stopped it and against what, or how the rollout went. The serving path passes none.
 */
export interface ConditionTrace {
  /** Filter `index` did not match `properties` (null: a filter type that never matches). */
  propertyFailed(index: number, filter: PropertyFilter, properties: Properties | null): void
  /** Flag filter `index` found the flag `target` at `value` (undefined: not evaluated, or missing). */
  dependencyFailed(
    index: number,
    filter: PropertyFilter,
    target: number | 'missing',
    value: boolean | string | undefined,
  ): void
  /** The set's cohort filters did not all match (`loaded` false: cohorts were not loaded for this request). */
  cohortsFailed(filters: PropertyFilter[], loaded: boolean): void
  /** The rollout check: `hash` is null when a full rollout skipped hashing. */
  rollout(percentage: number | null | undefined, hash: number | null, inRollout: boolean): void
}

/** A set's own aggregation when the key is present (explicit null = person), else the flag's (§3a). */
export function conditionAggregation(flag: FlagDefinition, condition: ConditionSet): number | null {
  if (Object.hasOwn(condition, 'aggregation_group_type_index')) {
    return condition.aggregation_group_type_index ?? null
  }
  return flag.filters.aggregation_group_type_index ?? null
}

/** Person filters read person properties; group filters their own group type, else the set's (§5.3). */
function propertiesFor(filter: PropertyFilter, aggregation: number | null, ctx: RequestContext): Properties | null {
  const type = filter.type ?? 'person'
  if (type === 'person' || type === 'person_metadata') return ctx.person
  if (type === 'group') {
    const index = filter.group_type_index ?? aggregation
    return index === null || index === undefined ? {} : ctx.groupProperties(index)
  }
  return null
}

/** 100% short-circuits without hashing, so it matches even without a usable identifier (§2). */
export function checkRollout(
  flag: FlagDefinition,
  rolloutPercentage: number | null | undefined,
  aggregation: number | null,
  ctx: RequestContext,
  trace?: ConditionTrace,
): ConditionOutcome {
  if (isFullRollout(rolloutPercentage)) {
    trace?.rollout(rolloutPercentage, null, true)
    return 'condition_match'
  }
  const hash = hashFor(flag.key, hashedIdentifier(flag, aggregation, ctx))
  const inRollout = isInRollout(hash, rolloutPercentage as number)
  trace?.rollout(rolloutPercentage, hash, inRollout)
  return inRollout ? 'condition_match' : 'out_of_rollout_bound'
}

/**
 * Property filters in list order, stopping at the first miss; flag
 * dependencies against earlier results; cohort filters last, as a batch
 * (§3d). Then the rollout (§3e). Cohort errors propagate and fail the flag.
 */
export function evaluateCondition(
  flag: FlagDefinition,
  condition: ConditionSet,
  aggregation: number | null,
  ctx: RequestContext,
  trace?: ConditionTrace,
): ConditionOutcome {
  let cohortFilters: PropertyFilter[] | undefined
  const filters = condition.properties ?? []
  for (let index = 0; index < filters.length; index++) {
    const filter = filters[index]
    if (isFlagFilter(filter)) {
      const target = dependencyTarget(filter, ctx.lookup)
      const value = target === 'missing' ? undefined : ctx.results.get(target)
      if (!flagValueMatches(filter, value)) {
        trace?.dependencyFailed(index, filter, target, value)
        return 'no_condition_match'
      }
    } else if (filter.type === 'cohort') {
      ;(cohortFilters ??= []).push(filter)
    } else {
      const properties = propertiesFor(filter, aggregation, ctx)
      if (properties === null || !matchProperty(filter, properties, ctx.match)) {
        trace?.propertyFailed(index, filter, properties)
        return 'no_condition_match'
      }
    }
  }
  if (cohortFilters !== undefined) {
    if (ctx.cohorts === null || !cohortFiltersMatch(cohortFilters, ctx.person, ctx.cohorts)) {
      trace?.cohortsFailed(cohortFilters, ctx.cohorts !== null)
      return 'no_condition_match'
    }
  }
  return checkRollout(flag, condition.rollout_percentage, aggregation, ctx, trace)
}
