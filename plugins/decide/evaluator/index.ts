/**
 * The pure feature-flag evaluator: PostHog's flags-service semantics
 * (flags.md) with storage passed in as data. See evaluate.ts for the entry
 * point and plan.ts for what to fetch first.
 */
export { evaluateFlags, evaluateFlagsInSlices, type EvaluationSlices } from './evaluate.ts'
export {
  explainFlags,
  type ConditionExplanation,
  type ConditionVerdict,
  type Explanation,
  type FlagExplanation,
} from './explain.ts'
export { planEvaluation, type EvaluationPlan, type PlanInput } from './plan.ts'
export { prepareFlags, type PreparedFlags } from './prepared.ts'
export { calculateHash, hashFor, holdoutHash, normalizeDistinctId } from './hash.ts'
export { isFullRollout, isInRollout, selectVariant } from './rollout.ts'
export { matchProperty, type MatchContext } from './properties/match-property.ts'
export { resolveTimeZone } from './properties/timezone.ts'
export {
  cohortFiltersMatch,
  cohortMembership,
  indexCohorts,
  staticMembershipFor,
  type CohortContext,
} from './cohorts.ts'
export { flagValueMatches, planDependencies, type DependencyPlan } from './dependencies.ts'
export { evaluateFlag, type FlagMatch } from './flag.ts'
export { detectEvaluationRuntime, isFlagExcluded, type EvaluationRuntime, type RequestFilters } from './filtering.ts'
export { fillInitialProperties, mergePersonProperties } from './person-properties.ts'
export { flagNeedsHashKeyOverride, flagRequiresDatabase, propertyNeeds, type PropertyNeeds } from './requirements.ts'
export { FlagEvaluationError } from './errors.ts'
export { BACKTRACKING_MATCH_LIMIT_MS, needsBacktracking } from './properties/regex.ts'
export type * from './types.ts'
