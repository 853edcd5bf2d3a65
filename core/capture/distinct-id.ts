/**
 * The distinct_id of a wire event as one string (capture.md §1.6).
 */
import type { WireEvent } from './request.ts'
import { boundedJson } from './bounded-json.ts'
import { MAX_DISTINCT_ID_CHARS, asDistinctId } from '../plugin-api.ts'

// Steps cut the other ids an event names the same way, so these rules are in the contract.
export { cutToScalars } from '../plugin-api.ts'

/** '' when the event carries no usable id; the caller drops such an event. */
export function distinctIdOf(event: WireEvent): string {
  const value = rawDistinctId(event)
  if (value === undefined || value === null) return ''
  return asDistinctId(typeof value === 'string' ? value : canonicalJson(value, MAX_DISTINCT_ID_CHARS))
}

function rawDistinctId(event: WireEvent): unknown {
  for (const key of ['distinct_id', '$distinct_id']) {
    const value = event[key]
    if (value !== undefined && value !== null) return value
  }
  const properties = event.properties
  if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
    return (properties as Record<string, unknown>).distinct_id
  }
  return undefined
}

/** Compact JSON with object keys sorted, the way PostHog's capture prints a non-string id. */
export function canonicalJson(value: unknown, limit = Number.POSITIVE_INFINITY): string {
  return boundedJson(value, limit, { sortKeys: true })
}
