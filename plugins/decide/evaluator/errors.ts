/** A per-flag evaluation failure: the flag comes back `failed: true` with this reason code (§11). */
export class FlagEvaluationError extends Error {
  readonly code: string
  /** The cohort (or other object) at fault, for logs; not part of the response. */
  readonly subjectId: number | null

  constructor(code: string, description: string, subjectId: number | null = null) {
    super(description)
    this.name = 'FlagEvaluationError'
    this.code = code
    this.subjectId = subjectId
  }
}

// The server's codes and descriptions (`evaluation_error_code` / `evaluation_error_description`).
export const cohortNotFound = (id: number) =>
  new FlagEvaluationError('dependency_not_found_cohort', 'Cohort dependency not found', id)
export const cohortCycle = (id: number) =>
  new FlagEvaluationError('dependency_cycle_cohort', 'Cohort dependency cycle detected', id)
export const cohortFiltersUnparseable = (id: number | null = null) =>
  new FlagEvaluationError('cohort_filters_parsing_error', 'Failed to parse cohort filters', id)

/**
 * The request's time for regular expressions ran out before this flag's were matched. PostHog's
 * code for an evaluation that timed out; the SDKs keep their cached value for a failed flag.
 */
export const regexBudgetExhausted = () =>
  new FlagEvaluationError('timeout', "Timeout: the request's time budget for regular expressions was used up")

export const DATABASE_ERROR = { code: 'database_error', description: 'Database connection error during evaluation' }
export const HASH_KEY_OVERRIDE_ERROR = {
  code: 'hash_key_override_error',
  description: 'Failed to fetch hash key override for experience continuity',
}
