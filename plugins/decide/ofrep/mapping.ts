/**
 * OpenFeature Remote Evaluation Protocol (OFREP 0.3) over PostHog's flags: what an evaluation
 * context means as a /flags request, and how a flag's PostHog answer reads as an OFREP evaluation.
 * Pure: no HTTP, no storage (docs/openfeature.md has the mapping table).
 */
import type { FlagDocument } from '../store/documents.ts'
import type { FlagResult, Properties } from '../evaluator/index.ts'

export type OfrepErrorCode = 'PARSE_ERROR' | 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT' | 'GENERAL' | 'FLAG_NOT_FOUND'
export type OfrepReason = 'TARGETING_MATCH' | 'SPLIT' | 'DISABLED' | 'DEFAULT' | 'ERROR'

export interface OfrepSuccess {
  key: string
  value: unknown
  reason: OfrepReason
  variant?: string
  metadata: Record<string, string | number | boolean>
}

export interface OfrepFailure {
  key: string
  errorCode: OfrepErrorCode
  errorDetails: string
}

export class OfrepError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: OfrepErrorCode,
    detail: string,
  ) {
    super(detail)
  }
}

/** What an evaluation context becomes: the /flags request's fields. */
export interface ContextRequest {
  /** `targetingKey`; null when absent or empty (flags that hash it then answer TARGETING_KEY_MISSING). */
  distinctId: string | null
  personProperties: Properties
  groups: Record<string, string | number> | null
  groupProperties: Record<string, Properties> | null
  ip?: string
}

/** Context keys with a meaning of their own; every other key is a person property. */
const RESERVED = new Set(['targetingKey', 'groups', 'groupProperties', 'ip', '$ip'])

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const invalid = (detail: string) => new OfrepError(400, 'INVALID_CONTEXT', detail)

export function readContext(body: unknown): ContextRequest {
  if (!isRecord(body))
    throw new OfrepError(400, 'PARSE_ERROR', 'the request body must be a JSON object {"context": {...}}')
  const context = body.context ?? {}
  if (!isRecord(context)) throw invalid('context must be an object')
  const key = context.targetingKey
  if (key !== undefined && key !== null && typeof key !== 'string')
    throw invalid('context.targetingKey must be a string')
  const groups = context.groups ?? null
  if (
    groups !== null &&
    (!isRecord(groups) || Object.values(groups).some((v) => typeof v !== 'string' && typeof v !== 'number'))
  ) {
    throw invalid('context.groups must map each group type to its key, a string or a number')
  }
  const groupProperties = context.groupProperties ?? null
  if (groupProperties !== null && (!isRecord(groupProperties) || !Object.values(groupProperties).every(isRecord))) {
    throw invalid('context.groupProperties must map each group type to an object of properties')
  }
  const ip = context.ip ?? context.$ip
  if (ip !== undefined && typeof ip !== 'string') throw invalid('context.ip must be a string')
  const personProperties: Properties = {}
  for (const [name, value] of Object.entries(context)) if (!RESERVED.has(name)) personProperties[name] = value
  return {
    distinctId: typeof key === 'string' && key !== '' ? key : null,
    personProperties,
    groups: groups as ContextRequest['groups'],
    groupProperties: groupProperties as ContextRequest['groupProperties'],
    ...(ip !== undefined && { ip }),
  }
}

/**
 * Whether the flag's answer depends on hashing the person's distinct id: a person rollout under
 * 100 %, variants, or a holdout. Such a flag cannot be evaluated without a targeting key; any other
 * (a 100 % flag, conditions on context properties only) can.
 */
export function needsTargetingKey(flag: FlagDocument): boolean {
  const filters = flag.filters
  if (filters.aggregation_group_type_index !== undefined && filters.aggregation_group_type_index !== null) return false
  if (filters.multivariate?.variants?.length || filters.holdout) return true
  if (flag.ensure_experience_continuity) return true
  return (filters.groups ?? []).some(
    (set) => set.rollout_percentage !== undefined && set.rollout_percentage !== null && set.rollout_percentage < 100,
  )
}

/** The payload as metadata (OpenFeature metadata holds only primitives: JSON text). */
function payloadText(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) return undefined
  return typeof payload === 'string' ? payload : JSON.stringify(payload)
}

function parsedPayload(payload: unknown): unknown {
  if (typeof payload !== 'string') return payload
  try {
    return JSON.parse(payload)
  } catch {
    return payload
  }
}

function reasonOf(flag: FlagDocument, result: FlagResult): OfrepReason {
  const index = result.reason.condition_index
  const set = index === null ? undefined : flag.filters.groups?.[index]
  switch (result.reason.code) {
    case 'condition_match': {
      const split =
        (set?.rollout_percentage ?? 100) < 100 ||
        (Boolean(flag.filters.multivariate?.variants?.length) && !set?.variant)
      return split ? 'SPLIT' : 'TARGETING_MATCH'
    }
    case 'super_condition_value':
      return 'TARGETING_MATCH'
    case 'holdout_condition_value':
    case 'out_of_rollout_bound':
      return 'SPLIT'
    default:
      return 'DEFAULT'
  }
}

/**
 * A flag's PostHog answer as OFREP: a boolean flag's value is a boolean, a multivariate flag's the
 * variant key (also its `variant`). A remote-config flag (`is_remote_configuration`) exists to carry
 * its payload, so its value is the payload, parsed: that is how a provider's number and object
 * evaluations read it. Every flag with a payload also has it, as JSON text, in `metadata.payload`.
 */
export function toOfrep(flag: FlagDocument, result: FlagResult): OfrepSuccess | OfrepFailure {
  if (result.failed)
    return { key: flag.key, errorCode: 'GENERAL', errorDetails: `${result.reason.code}: ${result.reason.description}` }
  const metadata: OfrepSuccess['metadata'] = {
    flagId: flag.id,
    version: flag.version,
    posthogReason: result.reason.code,
  }
  if (result.reason.condition_index !== null) metadata.conditionIndex = result.reason.condition_index
  const payload = payloadText(result.metadata.payload)
  if (payload !== undefined) metadata.payload = payload
  const reason = reasonOf(flag, result)
  if (flag.is_remote_configuration && result.enabled && result.hasPayload)
    return { key: flag.key, value: parsedPayload(result.metadata.payload), reason, metadata }
  if (result.variant !== null)
    return { key: flag.key, value: result.enabled ? result.variant : false, reason, variant: result.variant, metadata }
  return { key: flag.key, value: result.enabled, reason, metadata }
}

/** An inactive flag answers its off value, as DISABLED. */
export function disabled(flag: FlagDocument): OfrepSuccess {
  return { key: flag.key, value: false, reason: 'DISABLED', metadata: { flagId: flag.id, version: flag.version } }
}

export function missingKey(flag: FlagDocument): OfrepFailure {
  return {
    key: flag.key,
    errorCode: 'TARGETING_KEY_MISSING',
    errorDetails: `flag ${flag.key} splits users by their targeting key: set context.targetingKey`,
  }
}
