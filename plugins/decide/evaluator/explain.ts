/**
 * Why each flag answered what it did, for the admin API's dry run: the evaluation itself
 * (observeEvaluation in evaluate.ts, with the reference interpreter) reports what every condition
 * set did through the traces of flag.ts and conditions.ts; this module only puts those reports
 * into words. Values, payloads and reason codes are the evaluation's own, as /flags answers them.
 */
import type { ConditionTrace } from './conditions.ts'
import { conditionAggregation } from './conditions.ts'
import type { RequestContext } from './context.ts'
import { dependencyTarget, isFlagFilter, type FlagLookup } from './dependencies.ts'
import { observeEvaluation } from './evaluate.ts'
import { describeCondition, describeFilter, flagName, groupName, text } from './explain-text.ts'
import { holdoutBucket, holdoutPercentage, type FlagMatch, type FlagTrace } from './flag.ts'
import { preparedFor } from './prepared.ts'
import { lookupKey } from './properties/match-property.ts'
import { reasonCode, reasonDescription, type ReasonKind } from './reasons.ts'
import type { EvaluationInput, FlagDefinition, FlagReason, Properties } from './types.ts'

/** What became of one condition set. */
export type ConditionVerdict =
  | 'matched'
  | 'out_of_rollout'
  | 'property_missing'
  | 'property_not_matched'
  | 'dependency_not_matched'
  | 'cohort_not_matched'
  | 'group_not_provided'
  | 'device_id_missing'
  | 'not_evaluated'

export interface ConditionExplanation {
  index: number
  description: string
  verdict: ConditionVerdict
  /** The reason code the set produced (reasons.ts); null when it was not evaluated. */
  reason: string | null
  detail: string
  /** The filter that stopped the set, with the value it was matched against. */
  filter?: { index: number; type: string; key: string; operator: string; value: unknown; actual?: unknown }
  /** The rollout check: `bucket` is the identifier's hash in 0–100 (null: a 100% rollout does not hash). */
  rollout?: { percentage: number; bucket: number | null }
}

export interface FlagExplanation {
  key: string
  id: number
  enabled: boolean
  variant: string | null
  /** What `$feature/<key>` holds: the variant, true or false. */
  value: boolean | string
  payload: unknown
  failed: boolean
  reason: FlagReason
  /** One sentence: which set matched, or why none did. */
  detail: string
  conditions: ConditionExplanation[]
  /**
   * The flag's holdout and where the identifier fell in it (`bucket` in 0–100, held out when within
   * the exclusion percentage); absent when the flag has none or early access decided before it.
   */
  holdout?: { id: number; exclusion_percentage: number; bucket: number; held_out: boolean }
}

export interface Explanation {
  flags: Record<string, FlagExplanation>
  /** The person properties the flags were matched against (stored, request and derived merged). */
  person: Properties
  /** The merged properties of each group named in the request, by group type name. */
  groups: Record<string, Properties>
  errorsWhileComputingFlags: boolean
}

const round = (value: number) => Math.round(value * 10_000) / 10_000

/** Collects one flag's traces into ConditionExplanations. */
class FlagRecorder implements FlagTrace {
  readonly conditions: ConditionExplanation[]
  early: FlagMatch | null = null

  constructor(
    private readonly flag: FlagDefinition,
    private readonly lookup: FlagLookup,
    private readonly mapping: EvaluationInput['groupTypeMapping'],
    private readonly ctx: () => RequestContext | undefined,
  ) {
    this.conditions = (flag.filters.groups ?? []).map((condition, index) => ({
      index,
      description: describeCondition(flag, condition, lookup, mapping),
      verdict: 'not_evaluated' as const,
      reason: null,
      detail: 'not evaluated: an earlier condition set matched, or the flag was decided before its sets',
    }))
  }

  decidedEarly(match: FlagMatch): void {
    this.early = match
  }

  condition(index: number): ConditionTrace {
    const entry = this.conditions[index]
    const condition = this.flag.filters.groups?.[index] ?? {}
    return {
      propertyFailed: (filterIndex, filter, properties) => {
        const key = lookupKey(filter)
        const operator = filter.operator ?? 'exact'
        const found = { index: filterIndex, type: filter.type ?? 'person', key, operator, value: filter.value }
        const owner =
          filter.type === 'group'
            ? `${groupName(filter.group_type_index ?? conditionAggregation(this.flag, condition), this.mapping)} property`
            : 'person property'
        if (properties === null) {
          entry.verdict = 'property_not_matched'
          entry.filter = found
          entry.detail = `filter ${filterIndex + 1} has type "${filter.type}", which a condition never matches`
        } else if (!Object.hasOwn(properties, key) || properties[key] === undefined) {
          entry.verdict = 'property_missing'
          entry.filter = found
          entry.detail = `${owner} "${key}" is not set (the filter is ${describeFilter(filter, this.lookup, this.mapping)})`
        } else {
          entry.verdict = 'property_not_matched'
          entry.filter = { ...found, actual: properties[key] }
          entry.detail = `${owner} "${key}" is ${text(properties[key])}, which is not ${operator}${operator === 'is_not_set' ? '' : ` ${text(filter.value)}`}`
        }
      },
      dependencyFailed: (filterIndex, filter, target, value) => {
        const name = flagName(filter, this.lookup)
        entry.verdict = 'dependency_not_matched'
        entry.filter = {
          index: filterIndex,
          type: 'flag',
          key: filter.key,
          operator: filter.operator ?? 'flag_evaluates_to',
          value: filter.value,
          actual: value ?? null,
        }
        entry.detail =
          target === 'missing'
            ? `it depends on flag "${filter.key}", which does not exist`
            : value === undefined
              ? `it depends on flag "${name}", which was not evaluated`
              : `flag "${name}" is ${text(value)}; the condition needs it ${filter.value === true ? 'enabled' : filter.value === false ? 'disabled' : `to be ${text(filter.value)}`}`
      },
      cohortsFailed: (filters, loaded) => {
        entry.verdict = 'cohort_not_matched'
        if (!loaded) {
          entry.detail = 'its cohorts need the stored person, which this evaluation did not read'
          return
        }
        const cohorts = this.ctx()?.cohorts
        const missed = filters.filter((filter) => {
          const id = Number(filter.value)
          const member = cohorts?.known?.members.get(id) ?? cohorts?.staticMembership.get(id) ?? false
          return (filter.operator ?? 'in') === 'not_in' ? member : !member
        })
        entry.detail = missed.length
          ? missed
              .map((filter) =>
                filter.operator === 'not_in'
                  ? `the person is in cohort ${text(filter.value)}`
                  : `the person is not in cohort ${text(filter.value)}`,
              )
              .join('; ')
          : 'its cohort conditions did not all match'
      },
      rollout: (percentage, hash, inRollout) => {
        const rollout = { percentage: percentage ?? 100, bucket: hash === null ? null : round(hash * 100) }
        entry.rollout = rollout
        if (!inRollout) {
          entry.verdict = 'out_of_rollout'
          entry.detail = `the identifier's bucket ${rollout.bucket} is above the ${rollout.percentage}% rollout`
        }
      },
    }
  }

  conditionDone(index: number, outcome: ReasonKind, skipped: 'device_id_missing' | 'group_not_provided' | null): void {
    const entry = this.conditions[index]
    entry.reason = reasonCode(outcome)
    if (skipped === 'device_id_missing') {
      entry.verdict = 'device_id_missing'
      entry.detail = 'the flag buckets by device id and the request has none'
    } else if (skipped === 'group_not_provided') {
      const aggregation = conditionAggregation(this.flag, this.flag.filters.groups?.[index] ?? {})
      entry.verdict = 'group_not_provided'
      entry.detail = `the request names no ${groupName(aggregation, this.mapping)} in its groups`
    } else if (outcome === 'condition_match') {
      entry.verdict = 'matched'
      const rollout = entry.rollout
      entry.detail =
        rollout && rollout.bucket !== null
          ? `every filter matched and the identifier's bucket ${rollout.bucket} is within the ${rollout.percentage}% rollout`
          : 'every filter matched, rollout 100%'
    }
  }
}

/** The group types of the sets skipped for want of a group in the request, by name. */
function missingGroups(flag: FlagDefinition, recorder: FlagRecorder, mapping: EvaluationInput['groupTypeMapping']) {
  const names = recorder.conditions
    .filter((set) => set.verdict === 'group_not_provided')
    .map((set) => groupName(conditionAggregation(flag, flag.filters.groups?.[set.index] ?? {}), mapping))
  return [...new Set(names)]
}

function heldOutDetail(answer: FlagExplanation): string {
  const holdout = answer.holdout
  if (!holdout) return `held out: variant ${answer.variant}`
  const why =
    holdout.exclusion_percentage >= 100
      ? `holdout ${holdout.id} excludes everyone (100%)`
      : `the identifier's holdout bucket ${holdout.bucket} is within holdout ${holdout.id}'s ${holdout.exclusion_percentage}% exclusion`
  return `held out: ${why}, so it gets variant "${answer.variant}" and no condition set is evaluated`
}

function flagDetail(
  flag: FlagDefinition,
  answer: FlagExplanation,
  recorder: FlagRecorder | undefined,
  lookup: FlagLookup,
  mapping: EvaluationInput['groupTypeMapping'],
) {
  const detail = conditionsDetail(flag, answer, recorder, lookup, mapping)
  const holdout = answer.holdout
  if (!holdout || holdout.held_out) return detail
  return `${detail} (not held out: holdout bucket ${holdout.bucket} is above holdout ${holdout.id}'s ${holdout.exclusion_percentage}% exclusion)`
}

function conditionsDetail(
  flag: FlagDefinition,
  answer: FlagExplanation,
  recorder: FlagRecorder | undefined,
  lookup: FlagLookup,
  mapping: EvaluationInput['groupTypeMapping'],
) {
  const { reason } = answer
  if (reason.code === 'missing_dependency') {
    const missing = (flag.filters.groups ?? [])
      .flatMap((set) => set.properties ?? [])
      .filter((filter) => isFlagFilter(filter) && dependencyTarget(filter, lookup) === 'missing')
      .map((filter) => `"${filter.key}"`)
    return missing.length
      ? `it depends on flag ${missing.join(', ')}, which does not exist`
      : 'it depends on a flag that depends on it in turn, or on a broken flag'
  }
  if (answer.failed || !recorder) return reason.description
  if (recorder.early)
    return reason.code === 'holdout_condition_value'
      ? heldOutDetail(answer)
      : `decided by early-access enrollment ("$feature_enrollment/${flag.key}" or the legacy super condition): ${answer.enabled}`
  const index = reason.condition_index
  const set = index === null ? undefined : recorder.conditions[index]
  if (reason.code === 'condition_match' && set)
    return `condition set ${set.index + 1} matched (${set.description})${answer.variant ? `: variant ${answer.variant}` : ''}`
  if (recorder.conditions.length === 0) return 'the flag has no condition sets'
  const missing = reason.code === 'no_group_type' ? missingGroups(flag, recorder, mapping) : []
  if (missing.length)
    return `the flag is evaluated per ${missing.join(' or ')} and the request names no ${missing.join(' or ')} in its groups: give the ${missing[0]} key to evaluate it`
  if (!set) return reason.description
  return `${reason.description}; the closest was condition set ${set.index + 1}: ${set.detail}`
}

/** Evaluates `input` as /flags does and explains every flag of it, disabled ones too. */
export function explainFlags(input: EvaluationInput): Explanation {
  const prepared = preparedFor(input.flags, input.prepared)
  const mapping = input.groupTypeMappingFailed ? null : (input.groupTypeMapping ?? null)
  let ctx: RequestContext | undefined
  const recorders = new Map<number, FlagRecorder>()
  const result = observeEvaluation(
    { ...input, prepared },
    {
      context: (built) => {
        ctx = built
      },
      flag: (flag) => {
        const recorder = new FlagRecorder(flag, prepared.lookup, mapping, () => ctx)
        recorders.set(flag.id, recorder)
        return recorder
      },
    },
  )
  const flags: Record<string, FlagExplanation> = Object.create(null)
  for (const flag of prepared.flags) {
    if (flag.deleted) continue
    const answered = result.flags[flag.key]
    if (!answered) {
      // left out by the request's filters (flag_keys), as /flags does
      if (flag.active || (input.flagKeys && !input.flagKeys.includes(flag.key))) continue
      flags[flag.key] = {
        key: flag.key,
        id: flag.id,
        enabled: false,
        variant: null,
        value: false,
        payload: null,
        failed: false,
        reason: { code: 'flag_disabled', condition_index: null, description: reasonDescription('flag_disabled', null) },
        detail: 'the flag is disabled: everyone gets false (flags leaves it out of its answer)',
        conditions: [],
      }
      continue
    }
    const recorder = recorders.get(flag.id)
    const explanation: FlagExplanation = {
      key: flag.key,
      id: flag.id,
      enabled: answered.enabled,
      variant: answered.variant,
      value: answered.enabled ? (answered.variant ?? true) : false,
      payload: answered.metadata.payload,
      failed: answered.failed,
      reason: { ...answered.reason },
      detail: '',
      conditions: recorder?.conditions ?? [],
    }
    const holdout = flag.filters.holdout
    const heldOut = answered.reason.code === 'holdout_condition_value'
    if (holdout && ctx && !answered.failed && (heldOut || !recorder?.early))
      explanation.holdout = {
        id: holdout.id,
        exclusion_percentage: holdoutPercentage(holdout),
        bucket: round(holdoutBucket(flag, ctx) * 100),
        held_out: heldOut,
      }
    explanation.detail = flagDetail(flag, explanation, recorder, prepared.lookup, mapping)
    flags[flag.key] = explanation
  }
  const groups: Record<string, Properties> = {}
  for (const [index, name] of Object.entries(mapping ?? {}))
    if (ctx && input.groups && Object.hasOwn(input.groups, name)) groups[name] = ctx.groupProperties(Number(index))
  return {
    flags,
    person: ctx?.person ?? {},
    groups,
    errorsWhileComputingFlags: result.errorsWhileComputingFlags,
  }
}
