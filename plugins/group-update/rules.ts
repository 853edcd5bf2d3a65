/**
 * The pure rules of group processing (capture.md §2.9, §2.1 B.2, §2.3): reading `$groupidentify`
 * and `$groups`, and merging `$group_set` into stored group properties. Property names come from
 * clients, so objects are built with define semantics (spread, fromEntries), never `obj[name] =`,
 * which would let `__proto__` replace a prototype.
 */
import type { IngestEvent } from '../../core/plugin-api.ts'

export const MAX_GROUP_TYPES = 5
export const MAX_GROUP_KEY_LENGTH = 400
export const GROUP_IDENTIFY = '$groupidentify'

type Json = Record<string, unknown>
export const isPlainObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date)

/** Group keys are strings: numbers and booleans are stringified, NUL becomes U+FFFD as PostHog does. */
export function groupKeyOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD')
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value)
  return undefined
}

export function isGroupKeyTooLong(event: IngestEvent): boolean {
  if (event.event !== GROUP_IDENTIFY) return false
  const key = groupKeyOf(event.properties.$group_key)
  return key !== undefined && key.length > MAX_GROUP_KEY_LENGTH
}

export type GroupIdentify =
  | { readonly ok: true; readonly type: string; readonly key: string; readonly set: Json }
  | { readonly ok: false; readonly warning: 'invalid_group_identify' | 'invalid_group_set'; readonly details: Json }

/** What a `$groupidentify` asks for, or the warning that explains why no group is written. */
export function parseGroupIdentify(properties: Json): GroupIdentify {
  const type = properties.$group_type
  const key = groupKeyOf(properties.$group_key)
  if (typeof type !== 'string' || type === '')
    return {
      ok: false,
      warning: 'invalid_group_identify',
      details: { reason: '$group_type must be a non-empty string' },
    }
  if (key === undefined || key === '')
    return {
      ok: false,
      warning: 'invalid_group_identify',
      details: { reason: '$group_key must be a non-empty string or number', group_type: type },
    }
  const set = properties.$group_set ?? {}
  if (!isPlainObject(set))
    return { ok: false, warning: 'invalid_group_set', details: { group_type: type, group_key: key } }
  return { ok: true, type, key, set }
}

/** `$groupidentify` never updates a person: its `$set`, `$set_once` and `$unset` are removed (§2.3). */
export function withoutPersonUpdates(event: IngestEvent): IngestEvent | undefined {
  const { $set, $set_once, $unset, ...properties } = event.properties
  if ($set === undefined && $set_once === undefined && $unset === undefined) return undefined
  return { ...event, properties }
}

/** The `type → key` pairs of `$groups`, skipping entries with an empty type or a key that is not a scalar. */
export function groupsOf(properties: Json): Array<[type: string, key: string]> {
  if (!isPlainObject(properties.$groups)) return []
  const pairs: Array<[string, string]> = []
  for (const [type, value] of Object.entries(properties.$groups)) {
    const key = groupKeyOf(value)
    if (type !== '' && key !== undefined) pairs.push([type, key])
  }
  return pairs
}

export const GROUP_COLUMNS = Array.from({ length: MAX_GROUP_TYPES }, (_, i) => `$group_${i}`)

/** Properties with `$group_<index>` set to the key of each group the event belongs to. */
export function withGroupColumns(
  properties: Json,
  columns: ReadonlyArray<readonly [index: number, key: string]>,
): Json {
  return Object.fromEntries([
    ...Object.entries(properties),
    ...columns.map(([index, key]) => [`$group_${index}`, key] as const),
  ])
}

/** Personless events get no `$group_<index>`, and lose any the client sent (§2.9). */
export function withoutGroupColumns(properties: Json): Json | undefined {
  if (!GROUP_COLUMNS.some((name) => Object.hasOwn(properties, name))) return undefined
  return Object.fromEntries(Object.entries(properties).filter(([name]) => !GROUP_COLUMNS.includes(name)))
}

/** Structural equality of JSON-like values (what decides whether a stored property changes). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime()
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]))
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false
  const keys = Object.keys(a)
  return (
    keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
  )
}

/** A shallow merge where each sent key overwrites the stored value when it differs; unsent keys stay. */
export function mergeGroupProperties(stored: Json, set: Json): { changed: boolean; properties: Json } {
  const changes = Object.entries(set).filter(
    ([name, value]) => !Object.hasOwn(stored, name) || !deepEqual(stored[name], value),
  )
  if (!changes.length) return { changed: false, properties: stored }
  return { changed: true, properties: Object.fromEntries([...Object.entries(stored), ...changes]) }
}
