/**
 * A flag's conditions compiled once per definitions generation into closures: evaluateFlag's
 * answer (flag.ts stays the reference, and tests compare the two) without re-reading the
 * definition on every request. What the definition alone decides is decided here: each set's
 * aggregation and device gate, each filter's operator, prepared value and dependency target,
 * whether the rollout needs a hash, whether a match needs a variant hash. The answers
 * (FlagMatch) are shared between requests, one per outcome, so that evaluate.ts finds the
 * shared response record by identity.
 */
import { cohortFiltersMatch } from './cohorts.ts'
import { conditionAggregation } from './conditions.ts'
import type { ConditionOutcome } from './conditions.ts'
import type { RequestContext } from './context.ts'
import { dependencyTarget, flagValueMatches, isFlagFilter, type FlagLookup } from './dependencies.ts'
import { FlagEvaluationError } from './errors.ts'
import { earlyAccess, holdout, result, type FlagMatch } from './flag.ts'
import { hashPrefix, hashWithPrefix, type HashPrefix } from './hash.ts'
import { hashedIdentifier, usesDeviceBucketing } from './identifiers.ts'
import { compileProperty } from './properties/compiled-property.ts'
import { outranks, type ReasonKind } from './reasons.ts'
import { isFullRollout, isInRollout, selectVariant } from './rollout.ts'
import type { ConditionSet, FlagDefinition, PropertyFilter } from './types.ts'

export interface CompiledFlag {
  evaluate(ctx: RequestContext): FlagMatch
  /** What was compiled, one line per filter (the decide option `printCompiledFlags`). */
  readonly listing: string
}

type Check = (ctx: RequestContext) => boolean

interface CompiledCondition {
  readonly aggregation: number | null
  /** Device-bucketed person sets are out of rollout without a device id. */
  readonly needsDevice: boolean
  readonly outcome: (ctx: RequestContext) => ConditionOutcome
  /** A valid override variant, else null (the variant is then hashed). */
  readonly variant: string | null
}

/** One filter of a set as evaluateCondition reads it (cohorts apart), with its listing line. */
function compileFilter(
  filter: PropertyFilter,
  aggregation: number | null,
  lookup: FlagLookup,
): { check: Check; text: string } {
  if (isFlagFilter(filter)) {
    const target = dependencyTarget(filter, lookup)
    const text = `flag ${JSON.stringify(filter.key)} → ${target === 'missing' ? 'missing' : `id ${target}`} ${filter.operator} ${JSON.stringify(filter.value)}`
    return {
      text,
      check:
        target === 'missing'
          ? () => flagValueMatches(filter, undefined)
          : (ctx) => flagValueMatches(filter, ctx.results.get(target)),
    }
  }
  const { matches, text } = compileProperty(filter)
  const type = filter.type ?? 'person'
  if (type === 'person' || type === 'person_metadata') return { text, check: (ctx) => matches(ctx.person, ctx.match) }
  if (type === 'group') {
    const index = filter.group_type_index ?? aggregation
    if (index === null || index === undefined)
      return { text: `${text} (no group type: no properties)`, check: (ctx) => matches({}, ctx.match) }
    return { text: `${text} (group ${index})`, check: (ctx) => matches(ctx.groupProperties(index), ctx.match) }
  }
  return { text: `${text} (type ${type}: never)`, check: () => false }
}

function compileCondition(
  flag: FlagDefinition,
  prefix: HashPrefix,
  condition: ConditionSet,
  index: number,
  lookup: FlagLookup,
  lines: string[],
): CompiledCondition {
  const aggregation = conditionAggregation(flag, condition)
  const needsDevice = aggregation === null && usesDeviceBucketing(flag)
  lines.push(`  set ${index}: aggregation ${aggregation ?? 'person'}${needsDevice ? ', device id required' : ''}`)
  const checks: Check[] = []
  const cohorts: PropertyFilter[] = []
  for (const filter of condition.properties ?? []) {
    if (!isFlagFilter(filter) && filter.type === 'cohort') {
      cohorts.push(filter)
      continue
    }
    const { check, text } = compileFilter(filter, aggregation, lookup)
    checks.push(check)
    lines.push(`    ${text}`)
  }
  if (cohorts.length)
    lines.push(`    cohorts ${cohorts.map((f) => JSON.stringify(f.value)).join(', ')} (last, as a batch)`)
  const percentage = condition.rollout_percentage
  const full = isFullRollout(percentage)
  lines.push(`    rollout ${full ? '100% (no hash)' : `${percentage}%`}`)
  const variants = flag.filters.multivariate?.variants ?? []
  const variant = condition.variant && variants.some((v) => v.key === condition.variant) ? condition.variant : null
  const outcome = (ctx: RequestContext): ConditionOutcome => {
    for (let i = 0; i < checks.length; i++) if (!checks[i]!(ctx)) return 'no_condition_match'
    if (cohorts.length && (ctx.cohorts === null || !cohortFiltersMatch(cohorts, ctx.person, ctx.cohorts)))
      return 'no_condition_match'
    if (full) return 'condition_match'
    return isInRollout(hashWithPrefix(prefix, hashedIdentifier(flag, aggregation, ctx)), percentage as number)
      ? 'condition_match'
      : 'out_of_rollout_bound'
  }
  return { aggregation, needsDevice, outcome, variant }
}

/** The shared FlagMatch of each outcome, made on first sight (a flag has few), found without building a key. */
function outcomes(flag: FlagDefinition, sets: number) {
  const matched = Array.from({ length: sets }, () => new Map<string | null, FlagMatch>())
  const unmatched = new Map<ReasonKind, (FlagMatch | undefined)[]>()
  const make = (matches: boolean, variant: string | null, kind: ReasonKind, index: number | null) =>
    Object.freeze(result(flag, matches, variant, kind, index, matches))
  return {
    matched(index: number, variant: string | null): FlagMatch {
      const known = matched[index]!
      let match = known.get(variant)
      if (!match) known.set(variant, (match = make(true, variant, 'condition_match', index)))
      return match
    },
    unmatched(kind: ReasonKind, index: number | null): FlagMatch {
      let known = unmatched.get(kind)
      if (!known) unmatched.set(kind, (known = []))
      const slot = index === null ? 0 : index + 1
      return (known[slot] ??= make(false, null, kind, index))
    },
  }
}

export function compileFlag(flag: FlagDefinition, lookup: FlagLookup): CompiledFlag {
  const version = flag.filters?.version
  if (version !== undefined && version !== null && version !== 1) {
    const listing = `${flag.key} (id ${flag.id}): unsupported format version ${version}`
    return {
      listing,
      evaluate: () => {
        throw new FlagEvaluationError('unsupported_flag_config', 'Flag configuration format v2 is not supported')
      },
    }
  }
  const filters = flag.filters
  const special =
    filters.feature_enrollment === true ||
    (filters.super_groups?.[0]?.properties?.length ?? 0) > 0 ||
    Boolean(filters.holdout)
  const lines = [`${flag.key} (id ${flag.id})${special ? ': early access or holdout first (interpreted)' : ''}`]
  const prefix = hashPrefix(flag.key)
  const conditions = (filters.groups ?? []).map((condition, index) =>
    compileCondition(flag, prefix, condition, index, lookup, lines),
  )
  const variants = filters.multivariate?.variants ?? []
  const answer = outcomes(flag, conditions.length)
  const evaluate = (ctx: RequestContext): FlagMatch => {
    if (special) {
      const decided = earlyAccess(flag, ctx) ?? holdout(flag, ctx)
      if (decided) return decided
    }
    let bestKind: ReasonKind = 'no_group_type'
    let bestIndex: number | null = null
    let skippedGroupCondition = false
    for (let index = 0; index < conditions.length; index++) {
      const condition = conditions[index]!
      const aggregation = condition.aggregation
      let outcome: ReasonKind
      if (condition.needsDevice && !ctx.deviceId) outcome = 'out_of_rollout_bound'
      else if (aggregation !== null && !ctx.groupKey(aggregation).usable) {
        skippedGroupCondition = true
        outcome = 'no_group_type'
      } else outcome = condition.outcome(ctx)
      if (outranks(outcome, bestKind)) {
        bestKind = outcome
        bestIndex = index
      }
      if (outcome === 'condition_match') {
        // no variants: no variant, and no variant hash to compute for it
        const variant =
          condition.variant ??
          (variants.length
            ? selectVariant(variants, hashWithPrefix(prefix, hashedIdentifier(flag, aggregation, ctx), 'variant'))
            : null)
        return answer.matched(index, variant)
      }
    }
    if (bestKind === 'no_condition_match' && skippedGroupCondition) bestKind = 'no_condition_match_groups_not_evaluated'
    return answer.unmatched(bestKind, bestIndex)
  }
  return { evaluate, listing: lines.join('\n') }
}
