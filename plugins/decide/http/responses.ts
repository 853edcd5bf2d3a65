/**
 * Response shapes of /flags and /decide (flags.md §10.2–§10.3, design.md §1), chosen by path and
 * `v`. Maps keyed by flag keys have no prototype, so a flag called `__proto__` or `constructor`
 * serialises like any other.
 */
import type { EvaluationResult, FlagResult } from '../evaluator/index.ts'

export type ResponseShape =
  /** /decide v1 or no v: enabled keys. */
  | 'decide-v1'
  /** /decide v2: enabled keys → value. */
  | 'decide-v2'
  /** /flags v1 or no v, /decide v3: every flag → value, with payloads. */
  | 'legacy'
  /** /flags v2, /decide v4+: per-flag records. */
  | 'v2'
  /** /flags v3+: per-flag records with `value`. */
  | 'v3'

export function shapeFor(path: string, v: string | undefined): ResponseShape {
  const version = v === undefined ? undefined : Number.parseInt(v, 10)
  const known = version !== undefined && Number.isFinite(version) ? version : undefined
  if (/^\/decide(\/|$)/.test(path)) {
    if (known === undefined || known <= 1) return 'decide-v1'
    if (known === 2) return 'decide-v2'
    return known === 3 ? 'legacy' : 'v2'
  }
  if (known === undefined || known <= 1) return 'legacy'
  return known === 2 ? 'v2' : 'v3'
}

const record = <T>(): Record<string, T> => Object.create(null) as Record<string, T>

const valueOf = (flag: FlagResult): boolean | string => (flag.enabled ? (flag.variant ?? true) : false)

function metadata(flag: FlagResult) {
  return {
    id: flag.metadata.id,
    version: flag.metadata.version,
    description: flag.metadata.description,
    payload: flag.metadata.payload,
    has_experiment: false,
  }
}

function v2Record(flag: FlagResult) {
  return {
    key: flag.key,
    enabled: flag.enabled,
    variant: flag.variant,
    ...(flag.failed && { failed: true }),
    reason: flag.reason,
    metadata: metadata(flag),
  }
}

function v3Record(flag: FlagResult) {
  return {
    key: flag.key,
    value: flag.failed ? null : valueOf(flag),
    ...(flag.failed && { failed: true }),
    reason: flag.reason,
    metadata: { ...metadata(flag), config_version: null },
  }
}

/** One flag's record in the per-flag shapes (`flags: {key: record}`). */
export function flagRecord(shape: 'v2' | 'v3', flag: FlagResult): Record<string, unknown> {
  return shape === 'v2' ? v2Record(flag) : v3Record(flag)
}

export interface FlagsBodyParts {
  requestId: string
  evaluatedAt: number
}

/** The flags part of the response, with the request id and evaluation time the current shapes carry. */
export function flagsResponse(
  shape: ResponseShape,
  result: EvaluationResult,
  parts: FlagsBodyParts,
): Record<string, unknown> {
  const flags = result.answers
  if (shape === 'decide-v1') return { featureFlags: flags.filter((f) => f.enabled).map((f) => f.key) }
  if (shape === 'decide-v2') {
    const featureFlags = record<boolean | string>()
    for (const flag of flags) if (flag.enabled) featureFlags[flag.key] = valueOf(flag)
    return { featureFlags }
  }
  const common = { errorsWhileComputingFlags: result.errorsWhileComputingFlags }
  if (shape === 'legacy') {
    const featureFlags = record<boolean | string>()
    const featureFlagPayloads = record<unknown>()
    for (const flag of flags) {
      featureFlags[flag.key] = valueOf(flag)
      if (flag.hasPayload) featureFlagPayloads[flag.key] = flag.metadata.payload
    }
    return { ...common, featureFlags, featureFlagPayloads, ...parts }
  }
  const records = record<unknown>()
  for (const flag of flags) records[flag.key] = flagRecord(shape, flag)
  return { ...common, flags: records, ...parts }
}

/** The fields the old /decide always answered with (design.md §1 lists the v3 contract). */
export function decideFields(): Record<string, unknown> {
  return {
    config: { enable_collect_everything: true },
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression: ['gzip', 'lz64'],
  }
}
