/**
 * The distinct_id of a wire event as one string (capture.md §1.6).
 */
import type { WireEvent } from './request.ts'
import { boundedJson } from './bounded-json.ts'

export const MAX_DISTINCT_ID_CHARS = 200

/** '' when the event carries no usable id; the caller drops such an event. */
export function distinctIdOf(event: WireEvent): string {
  const value = rawDistinctId(event)
  if (value === undefined || value === null) return ''
  return asDistinctId(typeof value === 'string' ? value : canonicalJson(value, MAX_DISTINCT_ID_CHARS))
}

/**
 * Text made a distinct_id: NUL replaced by U+FFFD, cut to 200 Unicode scalars. The ids an event
 * names besides its own (`$anon_distinct_id`, the `alias` of `$create_alias`) become distinct
 * ids of a person too, so they are cut the same way.
 */
export function asDistinctId(text: string): string {
  return cutToScalars(text, MAX_DISTINCT_ID_CHARS).replaceAll('\0', '\uFFFD')
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

/** The first `max` Unicode scalars (code points), not UTF-16 units and not bytes. */
export function cutToScalars(text: string, max: number): string {
  if (text.length <= max) return text
  let scalars = 0
  let end = 0
  for (const char of text) {
    if (scalars === max) break
    scalars++
    end += char.length
  }
  return text.slice(0, end)
}
