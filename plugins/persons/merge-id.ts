/**
 * The other id of a merge (`$anon_distinct_id` of `$identify`, `alias` of `$create_alias` and
 * `$merge_dangerously`) becomes a distinct id of a person, so it is made one the way capture makes
 * the event's own distinct_id (capture.md §1.6): NUL replaced by U+FFFD, cut to 200 characters.
 * A later event sending the same long id as its distinct_id then finds the same person, and no
 * event stores an id of megabytes in the person tables.
 */
import type { IngestEvent } from '../../core/plugin-api.ts'
import { asDistinctId, copyRecord, withFields } from '../../core/plugin-api.ts'
import { hasOwn } from './properties.ts'

const MERGE_ID_PROPERTY = new Map([
  ['$identify', '$anon_distinct_id'],
  ['$create_alias', 'alias'],
  ['$merge_dangerously', 'alias'],
])

/** The event with its merge id made a distinct id; the same event when that changes nothing. */
export function withMergeIdAsDistinctId(event: IngestEvent): IngestEvent {
  const key = MERGE_ID_PROPERTY.get(event.event)
  if (key === undefined || !hasOwn(event.properties, key)) return event
  const value = event.properties[key]
  // the merge reads the id with String(): only a string or an array can print long or with NUL
  if (typeof value !== 'string' && !Array.isArray(value)) return event
  const text = String(value)
  const id = asDistinctId(text)
  if (id === text) return event
  const properties = copyRecord(event.properties)
  properties[key] = id
  return withFields(event, { properties })
}
