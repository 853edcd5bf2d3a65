/**
 * The person side of event normalisation (capture.md §2.2b): device, page and campaign properties
 * of the event become `$set` (latest touch) and `$initial_*` in `$set_once` (first touch).
 */
import type { Properties } from './properties.ts'
import { copyProperties, emptyProperties, hasOwn, isPlainObject } from './properties.ts'
import { copyRecord } from '../../core/plugin-api.ts'

const DEVICE_AND_PAGE_KEYS = [
  '$app_build',
  '$app_name',
  '$app_namespace',
  '$app_version',
  '$browser',
  '$browser_version',
  '$device_type',
  '$current_url',
  '$pathname',
  '$os',
  '$os_name',
  '$os_version',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$raw_user_agent',
]
const CAMPAIGN_KEYS = [
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_name',
  'utm_term',
  'gclid',
  'gad_source',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'fbclid',
  'msclkid',
  'twclid',
  'li_fat_id',
  'mc_cid',
  'igshid',
  'ttclid',
  'rdt_cid',
  'irclid',
  '_kx',
  'epik',
  'qclid',
  'sccid',
]

/** Event property → its first-touch name: `utm_source` → `$initial_utm_source`, `$browser` → `$initial_browser`. */
export const PERSON_KEYS: ReadonlyMap<string, string> = new Map(
  [...DEVICE_AND_PAGE_KEYS, ...CAMPAIGN_KEYS].map((key) => [key, `$initial_${key.replace('$', '')}`]),
)

/** Events whose properties never describe the person. */
export const NOT_NORMALISED_EVENTS = new Set(['$snapshot', '$performance_event'])

/**
 * Returns the event properties with `$set` / `$set_once` filled in. Explicit values in `$set` and
 * `$set_once` win over lifted ones. A null is never written as a first-touch value (browsers send
 * absent campaign params as null, and a stored null would block the real first value), and
 * server SDKs (`$is_server: true`) describe their host, not the user, so their `$os` is not lifted.
 * `$os_name` is an alias of `$os`: it fills `$os` when absent and never becomes a person property.
 */
export function normaliseForPerson(source: Properties): Properties {
  const properties = copyRecord(source)
  const skipHostOs = properties.$is_server === true
  if (hasOwn(properties, '$os_name') && !hasOwn(properties, '$os')) properties.$os = properties.$os_name
  const $set = copyProperties(properties.$set)
  const $setOnce = copyProperties(properties.$set_once)
  let lifted = false
  for (const [key, initialKey] of PERSON_KEYS) {
    if (!hasOwn(properties, key)) continue
    if (skipHostOs && (key === '$os' || key === '$os_version')) continue
    lifted = true
    const value = properties[key]
    if (!hasOwn($set, key)) $set[key] = value
    if (value !== null && value !== undefined && !hasOwn($setOnce, initialKey)) $setOnce[initialKey] = value
  }
  if (hasOwn(properties, '$os_name') && !skipHostOs) {
    const osName = properties.$os_name
    if (osName !== null && osName !== undefined && !hasOwn($setOnce, '$initial_os')) $setOnce.$initial_os = osName
    delete $set.$os_name
    delete $setOnce.$initial_os_name
  }
  // Malformed (non-object) $set / $set_once are replaced by {}; untouched events keep their shape.
  if (lifted || hasOwn(properties, '$set')) properties.$set = $set
  if (lifted || hasOwn(properties, '$set_once')) properties.$set_once = $setOnce
  return properties
}

export interface PersonOperations {
  readonly set: Properties
  readonly setOnce: Properties
  /** String keys only: an array's strings, or an object's keys. */
  readonly unset: readonly string[]
  /** The keys sent in each operation that had more than the limit (only the first ones are applied). */
  readonly exceeded?: Readonly<Partial<Record<'set_keys' | 'set_once_keys' | 'unset_keys', number>>>
}

/**
 * The operations of an event, each cut to its first `maxKeys` keys in the order sent: the work an
 * event can make the person steps do (compare, copy, write, show on the event) stays bounded
 * however many keys it sends. PostHog has no such count limit, only the size limit of a person.
 */
export function operationsOf(properties: Properties, maxKeys = Number.POSITIVE_INFINITY): PersonOperations {
  const exceeded: Record<string, number> = {}
  const set = firstKeys(properties.$set, maxKeys, exceeded, 'set_keys')
  const setOnce = firstKeys(properties.$set_once, maxKeys, exceeded, 'set_once_keys')
  const unsetSource = properties.$unset
  let unset = Array.isArray(unsetSource)
    ? unsetSource.filter((key): key is string => typeof key === 'string')
    : isPlainObject(unsetSource)
      ? Object.keys(unsetSource)
      : []
  if (unset.length > maxKeys) {
    exceeded.unset_keys = unset.length
    unset = unset.slice(0, maxKeys)
  }
  return Object.keys(exceeded).length ? { set, setOnce, unset, exceeded } : { set, setOnce, unset }
}

function firstKeys(source: unknown, maxKeys: number, exceeded: Record<string, number>, name: string): Properties {
  if (!isPlainObject(source)) return copyProperties(source)
  const keys = Object.keys(source)
  if (keys.length <= maxKeys) return copyProperties(source)
  exceeded[name] = keys.length
  const copy = emptyProperties()
  for (let index = 0; index < maxKeys; index++) copy[keys[index]!] = source[keys[index]!]
  return copy
}
