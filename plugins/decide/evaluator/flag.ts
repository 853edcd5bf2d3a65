import { conditionAggregation, evaluateCondition } from './conditions.ts'
import type { ConditionTrace } from './conditions.ts'
import type { RequestContext } from './context.ts'
import { FlagEvaluationError } from './errors.ts'
import { holdoutHash, hashFor } from './hash.ts'
import { hashedIdentifier, usesDeviceBucketing } from './identifiers.ts'
import { outranks, type ReasonKind } from './reasons.ts'
import { selectVariant } from './rollout.ts'
import type { ConditionSet, FlagDefinition } from './types.ts'

export interface FlagMatch {
  matches: boolean
  variant: string | null
  reason: ReasonKind
  conditionIndex: number | null
  /** Whether the flag stores a payload for the answer; a stored null counts (§10.1). */
  hasPayload: boolean
  payload: unknown
}

/** The match, with the payload stored for its value when `withPayload` (a stored null counts, §10.1). */
export function result(
  flag: FlagDefinition,
  matches: boolean,
  variant: string | null,
  kind: ReasonKind,
  index: number | null,
  withPayload: boolean,
): FlagMatch {
  const payloads = flag.filters.payloads
  const key = variant ?? 'true'
  if (!withPayload || !payloads || typeof payloads !== 'object' || !Object.hasOwn(payloads, key)) {
    return { matches, variant, reason: kind, conditionIndex: index, hasPayload: false, payload: null }
  }
  return { matches, variant, reason: kind, conditionIndex: index, hasPayload: true, payload: payloads[key] ?? null }
}

export const enrollmentKey = (flagKey: string) => `$feature_enrollment/${flagKey}`

/**
 * Early access (§6.1). The new format reads `$feature_enrollment/<key>`; the
 * legacy first super group decides only when one of its keys is present. The
 * payload of "true" is attached whether or not the person is enrolled.
 */
export function earlyAccess(flag: FlagDefinition, ctx: RequestContext): FlagMatch | null {
  if (flag.filters.feature_enrollment === true) {
    const key = enrollmentKey(flag.key)
    if (!Object.hasOwn(ctx.person, key)) return null
    const value = ctx.person[key]
    return result(flag, value === true || value === 'true', null, 'super_condition_value', 0, true)
  }
  const legacy = flag.filters.super_groups?.[0]
  const filters = legacy?.properties ?? []
  if (!legacy || filters.length === 0) return null
  if (!filters.some((filter) => Object.hasOwn(ctx.person, filter.key))) return null
  const outcome = evaluateCondition(flag, legacy, null, ctx)
  return result(flag, outcome === 'condition_match', null, 'super_condition_value', 0, true)
}

/** The exclusion percentage of a holdout, clamped to 0–100 as the flags service clamps it. */
export const holdoutPercentage = (config: { exclusion_percentage: number }) =>
  Math.min(Math.max(config.exclusion_percentage, 0), 100)

/** Where the identifier falls in 0–1 for holdouts: hashed without the flag key and without stored overrides (§6.2). */
export function holdoutBucket(flag: FlagDefinition, ctx: RequestContext): number {
  return holdoutHash(hashedIdentifier(flag, flag.filters.aggregation_group_type_index ?? null, ctx, false))
}

/** Holdout (§6.2): held out when the bucket is within the exclusion percentage (everyone at 100). */
export function holdout(flag: FlagDefinition, ctx: RequestContext): FlagMatch | null {
  const config = flag.filters.holdout
  if (!config) return null
  const percentage = holdoutPercentage(config)
  if (percentage < 100 && holdoutBucket(flag, ctx) > percentage / 100) return null
  return result(flag, true, `holdout-${config.id}`, 'holdout_condition_value', null, true)
}

/** A valid override variant wins; otherwise the hashed variant of the set's aggregation (§3g). */
function variantFor(
  flag: FlagDefinition,
  condition: ConditionSet,
  aggregation: number | null,
  ctx: RequestContext,
): string | null {
  const variants = flag.filters.multivariate?.variants ?? []
  if (condition.variant && variants.some((variant) => variant.key === condition.variant)) return condition.variant
  return selectVariant(variants, hashFor(flag.key, hashedIdentifier(flag, aggregation, ctx), 'variant'))
}

/** What an explanation (explain.ts) is told while a flag is evaluated, beyond its condition sets' traces. */
export interface FlagTrace {
  /** The trace for condition set `index`, about to be evaluated. */
  condition(index: number): ConditionTrace
  /** Set `index` ended with `outcome`; `skipped` says why it was not evaluated at all. */
  conditionDone(index: number, outcome: ReasonKind, skipped: 'device_id_missing' | 'group_not_provided' | null): void
  /** Early access or holdout decided before the condition sets. */
  decidedEarly(match: FlagMatch): void
}

/** One flag, server order (§3). Throws FlagEvaluationError for per-flag failures such as a deleted cohort. */
export function evaluateFlag(flag: FlagDefinition, ctx: RequestContext, trace?: FlagTrace): FlagMatch {
  const version = flag.filters?.version
  if (version !== undefined && version !== null && version !== 1) {
    throw new FlagEvaluationError('unsupported_flag_config', 'Flag configuration format v2 is not supported')
  }
  const decided = earlyAccess(flag, ctx) ?? holdout(flag, ctx)
  if (decided) {
    trace?.decidedEarly(decided)
    return decided
  }

  // the best reason so far
  let bestKind: ReasonKind = 'no_group_type'
  let bestIndex: number | null = null
  let skippedGroupCondition = false

  const conditions = flag.filters.groups ?? []
  for (let index = 0; index < conditions.length; index++) {
    const condition = conditions[index]
    const aggregation = conditionAggregation(flag, condition)
    let outcome: ReasonKind
    let skipped: 'device_id_missing' | 'group_not_provided' | null = null
    if (aggregation === null && usesDeviceBucketing(flag) && !ctx.deviceId) {
      outcome = 'out_of_rollout_bound'
      skipped = 'device_id_missing'
    } else if (aggregation !== null && !ctx.groupKey(aggregation).usable) {
      skippedGroupCondition = true
      outcome = 'no_group_type'
      skipped = 'group_not_provided'
    } else {
      outcome = evaluateCondition(flag, condition, aggregation, ctx, trace?.condition(index))
    }
    trace?.conditionDone(index, outcome, skipped)
    if (outranks(outcome, bestKind)) {
      bestKind = outcome
      bestIndex = index
    }
    if (outcome === 'condition_match') {
      return result(flag, true, variantFor(flag, condition, aggregation, ctx), bestKind, bestIndex, true)
    }
  }
  if (bestKind === 'no_condition_match' && skippedGroupCondition) bestKind = 'no_condition_match_groups_not_evaluated'
  return result(flag, false, null, bestKind, bestIndex, false)
}
