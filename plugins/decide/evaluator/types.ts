/**
 * Shapes the evaluator consumes and produces. Flag and cohort definitions are
 * PostHog's own JSON (as stored and as served by /flags/definitions); values
 * that come from JSON are typed `unknown` and narrowed where they are used,
 * because stored definitions are operator-written and may be malformed.
 */
import type { PreparedFlags } from './prepared.ts'

/** Person or group properties: a JSON object. */
export type Properties = Record<string, unknown>

export interface PropertyFilter {
  key: string
  value?: unknown
  operator?: string | null
  /** person (default) | group | cohort | flag | person_metadata */
  type?: string | null
  group_type_index?: number | null
  negation?: boolean | null
  /** Present in SDK-format definitions only; ignored by the server rules. */
  dependency_chain?: string[]
}

export interface ConditionSet {
  properties?: PropertyFilter[] | null
  rollout_percentage?: number | null
  variant?: string | null
  /** Absent: use the flag's aggregation. Explicit null: person. */
  aggregation_group_type_index?: number | null
}

export interface Variant {
  key: string
  name?: string | null
  rollout_percentage: number
}

export interface Holdout {
  id: number
  exclusion_percentage: number
}

export interface FlagFilters {
  groups?: ConditionSet[] | null
  multivariate?: { variants: Variant[] } | null
  payloads?: Record<string, unknown> | null
  aggregation_group_type_index?: number | null
  super_groups?: ConditionSet[] | null
  feature_enrollment?: boolean | null
  holdout?: Holdout | null
  /** 1 or absent: the classic format this evaluator implements. */
  version?: number | null
  /** The Python SDK also reads it here; the server reads the flag-level field. */
  bucketing_identifier?: string | null
}

export interface FlagDefinition {
  id: number
  key: string
  name?: string | null
  team_id?: number
  active?: boolean
  deleted?: boolean
  ensure_experience_continuity?: boolean | null
  version?: number | null
  evaluation_runtime?: string | null
  evaluation_contexts?: string[] | null
  /** Older name of evaluation_contexts. */
  evaluation_tags?: string[] | null
  bucketing_identifier?: string | null
  filters: FlagFilters
}

/** PostHog's cohort row. Dynamic cohorts carry filters.properties (a two-level AND/OR tree). */
export interface CohortDefinition {
  id: number
  is_static?: boolean
  deleted?: boolean
  /** static | person_property | behavioral | realtime | analytical */
  cohort_type?: string | null
  filters?: unknown
}

/** What the database gave for this request (§11: only flags that need it fail when it failed). */
export type DatabaseState =
  | { status: 'skipped' }
  | {
      status: 'loaded'
      /** The stored person found by distinct id, or null when there is none. */
      person: { properties: Properties; created_at?: string } | null
      /** Stored group properties by group type index, for the groups named in the request. */
      groupProperties?: Record<number, Properties>
      /** Ids of static cohorts the person belongs to. */
      staticCohortIds?: number[]
    }
  | { status: 'failed'; code?: string; description?: string }

export interface EvaluationInput {
  flags: FlagDefinition[]
  /** `prepareFlags(flags)` of this same array, kept across requests; rebuilt when it is of another array. */
  prepared?: PreparedFlags | null
  /** Cohorts by id (record or list); SDK-format bare property groups are accepted too. */
  cohorts?: Record<string, CohortDefinition | unknown> | CohortDefinition[]
  /** Group type index → name, e.g. {"0": "company"}. */
  groupTypeMapping?: Readonly<Record<string, string>> | null
  /** The mapping could not be loaded: group flags answer no_group_type and errors are flagged. */
  groupTypeMappingFailed?: boolean
  distinctId: string | number
  deviceId?: string | null
  anonDistinctId?: string | null
  /** Request person_properties; merged over the stored ones by the evaluator. */
  personPropertyOverrides?: Properties | null
  /** Request groups: type name → group key. */
  groups?: Record<string, unknown> | null
  /** Request group_properties: type name → properties; merged over the stored ones. */
  groupPropertyOverrides?: Record<string, Properties> | null
  database: DatabaseState
  /** Stored hash-key overrides for this person: flag key → hash key. */
  hashKeyOverrides?: Record<string, string> | null
  hashKeyOverrideFailed?: boolean
  /** IANA zone of the project; UTC when absent or unknown. */
  timezone?: string | null
  /** The request time, in epoch milliseconds or a Date. */
  now: number | Date
  /** Evaluate only these keys and their dependencies. */
  flagKeys?: string[] | null
  /** Runtime of the requesting SDK; undefined when it could not be told (see filtering.ts). */
  runtime?: 'all' | 'client' | 'server' | null
  evaluationContexts?: string[] | null
  onlySurveyFlags?: boolean
  /** Bounds on the request's evaluation time; unbounded when absent. */
  budget?: EvaluationBudget | null
  /** Evaluate with the reference interpreter (flag.ts) instead of the compiled flags (compiled-flag.ts). */
  interpret?: boolean
}

/**
 * What one request may spend. The clock is passed in (monotonic milliseconds, `performance.now`
 * in the service) so that the evaluator reads no time of its own.
 */
export interface EvaluationBudget {
  clock: () => number
  /** Milliseconds of regular-expression matching; a flag whose patterns find none left fails with `timeout`. */
  regexMs: number
}

export interface FlagReason {
  code: string
  condition_index: number | null
  description: string
}

/**
 * One flag's answer in the /flags?v=2 record shape. Serialisers omit `failed`
 * when false; `hasPayload` is not on the wire: it tells the legacy shapes
 * whether to list the flag in featureFlagPayloads (a stored null counts).
 */
export interface FlagResult {
  key: string
  enabled: boolean
  variant: string | null
  failed: boolean
  reason: FlagReason
  metadata: { id: number; version: number; description: null; payload: unknown }
  hasPayload: boolean
}

export interface EvaluationResult {
  /** The answers by flag key. */
  readonly flags: Record<string, FlagResult>
  /** The same answers in the order `flags` enumerates them (as JSON.stringify of it writes them). */
  readonly answers: readonly FlagResult[]
  readonly errorsWhileComputingFlags: boolean
}
