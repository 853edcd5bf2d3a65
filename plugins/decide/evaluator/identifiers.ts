import type { RequestContext } from './context.ts';
import type { FlagDefinition } from './types.ts';

export function usesDeviceBucketing(flag: FlagDefinition): boolean {
  return flag.bucketing_identifier === 'device_id';
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
  if (aggregation !== null) return ctx.groupKey(aggregation).text;
  if (usesDeviceBucketing(flag) && ctx.deviceId) return ctx.deviceId;
  const overrides = useStoredOverrides ? ctx.hashKeyOverrides : undefined;
  const stored = overrides && Object.prototype.hasOwnProperty.call(overrides, flag.key) ? overrides[flag.key] : undefined;
  if (stored !== undefined) return stored;
  if (flag.ensure_experience_continuity) return ctx.anonDistinctId ?? ctx.distinctId;
  return ctx.distinctId;
}
