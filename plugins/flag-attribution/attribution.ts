/**
 * `$feature/<key>` and `$active_feature_flags` (capture.md §2.11): SDKs add them, the server keeps
 * them as sent. When an event carries `$feature/*` but no `$active_feature_flags`, the list is
 * derived from them the way the SDKs build it: the sorted keys whose value is not false.
 */
const FEATURE_PREFIX = '$feature/'

/** Flag values the event carries, by key (`$feature/<key>` properties). */
export function featureValues(properties: Readonly<Record<string, unknown>>): Map<string, unknown> {
  const values = new Map<string, unknown>()
  for (const key of Object.keys(properties))
    if (key.startsWith(FEATURE_PREFIX) && key.length > FEATURE_PREFIX.length)
      values.set(key.slice(FEATURE_PREFIX.length), properties[key])
  return values
}

export function activeFlags(values: ReadonlyMap<string, unknown>): string[] {
  return [...values]
    .filter(([, value]) => value !== false && value !== null && value !== undefined)
    .map(([key]) => key)
    .sort()
}

/** The properties with `$active_feature_flags` filled in when absent; undefined when nothing changes. */
export function withActiveFlags(properties: Readonly<Record<string, unknown>>): Record<string, unknown> | undefined {
  if ('$active_feature_flags' in properties) return undefined
  const values = featureValues(properties)
  if (values.size === 0) return undefined
  const active = activeFlags(values)
  return active.length ? { ...properties, $active_feature_flags: active } : undefined
}

/** Properties for flag values evaluated by the service: `$feature/<key>` plus the active list. */
export function attributionProperties(values: Readonly<Record<string, boolean | string>>): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(values)) properties[FEATURE_PREFIX + key] = value
  const active = activeFlags(new Map(Object.entries(values)))
  if (active.length) properties.$active_feature_flags = active
  return properties
}
