import { PERSON_METADATA_PREFIX } from './properties/match-property.ts'
import type { Properties } from './types.ts'

/**
 * Person properties as the server matches them (§7.1): stored properties,
 * plus `distinct_id` when the database was queried, with the request's
 * overrides merged over them key by key, then missing `$initial_*` filled in.
 */

const INITIAL_SOURCES = [
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
  '$os_version',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$raw_user_agent',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
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
  'epik',
  'qclid',
  'sccid',
  'irclid',
  '_kx',
]

/** [source, `$initial_` name] pairs, built once. */
const INITIAL_PAIRS: readonly (readonly [string, string])[] = INITIAL_SOURCES.map((source) => [
  source,
  source.startsWith('$') ? `$initial_${source.slice(1)}` : `$initial_${source}`,
])

const hasOwn = (object: object, key: string) => Object.hasOwn(object, key)

/** Adds the missing `$initial_X` from `X` to an object this module made. */
function fillInPlace(properties: Properties): Properties {
  for (const [source, target] of INITIAL_PAIRS) {
    if (hasOwn(properties, source) && !hasOwn(properties, target)) properties[target] = properties[source]
  }
  return properties
}

/** Fills only missing `$initial_X` from `X`, so stored initial values survive. */
export function fillInitialProperties(properties: Properties): Properties {
  return fillInPlace(assignProperties({}, properties))
}

const CREATED_AT = `${PERSON_METADATA_PREFIX}created_at`

export interface StoredPerson {
  properties: Properties
  /** The person's creation time, read by `person_metadata` filters on `created_at`. */
  created_at?: string
}

/** A stored person's merged properties without overrides, and what they were merged for. */
interface MergedStored {
  readonly createdAt: string | undefined
  readonly distinctId: string
  readonly merged: Properties
}

/**
 * Merged properties of stored persons asked about without overrides (as server SDKs ask), by the
 * stored properties object: a person served from the persons cache is the same object request
 * after request (never modified: concurrent requests share it), and merging it anew, a copy and
 * a check of every `$initial_` pair, was a visible share of a flags request. Each is frozen, since
 * every request with that person shares it.
 */
const mergedStored = new WeakMap<object, MergedStored>()

/**
 * `stored` is undefined when the database was not queried for this request
 * (then only the overrides are used and `distinct_id` is not injected), and
 * null when it was queried and there is no such person.
 */
export function mergePersonProperties(
  stored: StoredPerson | null | undefined,
  overrides: Properties | null | undefined,
  distinctId: string,
): Properties {
  if (stored === undefined) return fillInPlace(assignProperties({}, overrides))
  const properties = stored?.properties
  if (stored === null || !isEmpty(overrides) || typeof properties !== 'object' || properties === null)
    return merge(stored, overrides, distinctId)
  const kept = mergedStored.get(properties)
  if (kept !== undefined && kept.createdAt === stored.created_at && kept.distinctId === distinctId) return kept.merged
  const merged = Object.freeze(merge(stored, null, distinctId))
  mergedStored.set(properties, { createdAt: stored.created_at, distinctId, merged })
  return merged
}

function isEmpty(overrides: Properties | null | undefined): boolean {
  for (const key in overrides) if (Object.hasOwn(overrides, key)) return false
  return true
}

function merge(stored: StoredPerson | null, overrides: Properties | null | undefined, distinctId: string): Properties {
  const merged = assignProperties({}, stored?.properties)
  if (stored?.created_at !== undefined) merged[CREATED_AT] = stored.created_at
  merged.distinct_id = distinctId
  return fillInPlace(assignProperties(merged, overrides))
}

/**
 * Copies `source`'s own properties onto `target` as `{ ...target, ...source }` would: defined, not
 * set, so a `__proto__` key stays a key. Made properties objects are built this way, never by a
 * spread that then gains keys: on Node 20's V8, an object made by spreading another that then gets
 * a property it lacked is given a new hidden class at every call once optimised, allocated in the
 * old generation, which filled it between requests and brought full collections (docs/performance.md).
 */
export function assignProperties(target: Properties, source: Properties | null | undefined): Properties {
  if (!source) return target
  for (const key of Object.keys(source)) {
    if (key === '__proto__')
      Object.defineProperty(target, key, { value: source[key], writable: true, enumerable: true, configurable: true })
    else target[key] = source[key]
  }
  return target
}
