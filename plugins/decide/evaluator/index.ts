/**
 * The pure feature-flag evaluator: PostHog's flags-service semantics
 * (flags.md) with storage passed in as data. See evaluate.ts for the entry
 * point and plan.ts for what to fetch first.
 */
export { evaluateFlags, evaluateFlagsInSlices } from './evaluate.ts'
export { explainFlags, type Explanation } from './explain.ts'
export { planEvaluation, type EvaluationPlan } from './plan.ts'
export { prepareFlags, type PreparedFlags } from './prepared.ts'
export { hashFor, normalizeDistinctId } from './hash.ts'
export { assignProperties } from './person-properties.ts'
export { detectEvaluationRuntime, type EvaluationRuntime } from './filtering.ts'
export { BACKTRACKING_MATCH_LIMIT_MS, needsBacktracking } from './properties/regex.ts'
export type * from './types.ts'
