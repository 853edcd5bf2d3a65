/**
 * `$set`, `$set_once` and `$unset` applied to a person's properties (capture.md §2.4), as a pure
 * function: the caller decides whether and how to write the result.
 */
import { isDeepStrictEqual } from 'node:util'
import type { Properties } from './properties.ts'
import { copyProperties, hasOwn } from './properties.ts'
import type { PersonOperations } from './normalise.ts'

/** Events that always write every change: they exist to change the person. */
const PERSON_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$set'])

/**
 * Keys that change on nearly every event. A change to only these does not write the person
 * (the event still shows it); a new key, or any other changed key in the same event, writes all.
 */
export const FILTERED_KEYS = new Set([
  '$current_url',
  '$pathname',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$browser',
  '$browser_version',
  '$device_type',
  '$raw_user_agent',
  '$os',
  '$os_name',
  '$os_version',
  '$geoip_postal_code',
  '$geoip_time_zone',
  '$geoip_latitude',
  '$geoip_longitude',
  '$geoip_accuracy_radius',
  '$geoip_subdivision_1_code',
  '$geoip_subdivision_1_name',
  '$geoip_subdivision_2_code',
  '$geoip_subdivision_2_name',
  '$geoip_subdivision_3_code',
  '$geoip_subdivision_3_name',
  '$geoip_city_confidence',
  '$geoip_country_confidence',
  '$geoip_postal_code_confidence',
  '$geoip_subdivision_1_confidence',
  '$geoip_subdivision_2_confidence',
])

export interface OperationOptions {
  readonly event: string
  /** Apply the filtered-keys rule; off means every change is written. */
  readonly skipFilteredWrites: boolean
  /** `$set_once` also fills a stored null with a non-null value (PostHog's newest rule). */
  readonly setOnceFillsNull: boolean
  /** The person was created by this event: PostHog ignores `$unset` at creation. */
  readonly ignoreUnset: boolean
}

export interface PropertyChange {
  /** The person's properties after this event (including changes that are not written). */
  readonly properties: Properties
  /** Something differs from the stored properties. */
  readonly changed: boolean
  /** The difference is worth a database write. */
  readonly write: boolean
}

export function applyOperations(current: Properties, ops: PersonOperations, options: OperationOptions): PropertyChange {
  const writeAll = !options.skipFilteredWrites || PERSON_EVENTS.has(options.event)
  const next = copyProperties(current)
  let changed = false
  let write = false

  for (const key of Object.keys(ops.setOnce)) {
    const value = ops.setOnce[key]
    const absent = !hasOwn(current, key) || (options.setOnceFillsNull && current[key] === null && value !== null)
    if (!absent) continue
    next[key] = value
    changed = true
    if (writeAll || !FILTERED_KEYS.has(key)) write = true
  }

  // $set is applied after $set_once, so a key in both ends with the $set value.
  const setChanges = Object.keys(ops.set).filter(
    (key) => !hasOwn(current, key) || !isDeepStrictEqual(current[key], ops.set[key]),
  )
  for (const key of setChanges) next[key] = ops.set[key]
  if (setChanges.length) changed = true
  if (setChanges.some((key) => !hasOwn(current, key) || writeAll || !FILTERED_KEYS.has(key))) write = true

  if (!options.ignoreUnset) {
    for (const key of ops.unset) {
      if (!hasOwn(current, key)) continue
      delete next[key]
      changed = true
      write = true
    }
  }
  return { properties: next, changed, write }
}
