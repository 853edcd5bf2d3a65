import type { RequestContext } from './context.ts'
import type { FlagDefinition } from './types.ts'

/**
 * `device_id` or `distinct_id`. Definitions carry it at the flag's top level or inside `filters`;
 * null or empty means distinct_id, and the top level wins when set (posthog-python's rule, which
 * reads both places; posthog-node and the flags service read the top level, which the SDK
 * definitions this service serves always fill from this).
 */
export function bucketingIdentifierOf(
  flag: Pick<FlagDefinition, 'bucketing_identifier' | 'filters'>,
): 'device_id' | 'distinct_id' {
  return (flag.bucketing_identifier || flag.filters?.bucketing_identifier) === 'device_id' ? 'device_id' : 'distinct_id'
}

export function usesDeviceBucketing(flag: FlagDefinition): boolean {
  return bucketingIdentifierOf(flag) === 'device_id'
}

/**
 * The identifier hashed for a flag under an aggregation (§4): the group key
 * for group aggregation; otherwise the device id for device-bucketed flags,
 * then a stored hash-key override, then (continuity flags) the request's
 * $anon_distinct_id, then the distinct id. Holdouts skip stored overrides.
 */
export function hashedIdentifier(
  flag: FlagDefinition,
  aggregation: number | null,
  ctx: RequestContext,
  useStoredOverrides = true,
): string {
  if (aggregation !== null) return ctx.groupKey(aggregation).text
  if (usesDeviceBucketing(flag) && ctx.deviceId) return ctx.deviceId
  const overrides = useStoredOverrides ? ctx.hashKeyOverrides : undefined
  const stored = overrides && Object.hasOwn(overrides, flag.key) ? overrides[flag.key] : undefined
  if (stored !== undefined) return stored
  if (flag.ensure_experience_continuity) return ctx.anonDistinctId ?? ctx.distinctId
  return ctx.distinctId
}
