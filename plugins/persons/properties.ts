/**
 * Property objects keyed by whatever names clients send (`$browser`, `a.b`, `__proto__`,
 * `constructor`). They are built on null-prototype objects and read through own keys only, so a
 * name is always data: it never reaches `Object.prototype` and never reads an inherited member.
 */
import type { EventContext } from '../../core/plugin-api.ts'

export type Properties = Record<string, unknown>

export const isPlainObject = (value: unknown): value is Properties =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * A null-prototype object in V8's fast mode: `Object.create(null)` (and `{__proto__: null}`) start
 * in dictionary mode, where every copy and `Object.keys` cost 3-4x more (person properties are
 * copied several times per event and serialised into each stored event). The prototype is just as
 * null either way.
 */
export function emptyProperties(): Properties {
  return Object.setPrototypeOf({}, null) as Properties
}

/** A null-prototype copy of the own enumerable keys of `source` (nothing for a non-object). */
export function copyProperties(source: unknown): Properties {
  const copy = emptyProperties()
  if (isPlainObject(source)) for (const key of Object.keys(source)) copy[key] = source[key]
  return copy
}

/** `{...under, ...over}` without ever invoking the `__proto__` setter. */
export function layered(under: unknown, over: unknown): Properties {
  const result = copyProperties(under)
  if (isPlainObject(over)) for (const key of Object.keys(over)) result[key] = over[key]
  return result
}

/**
 * PostHog's limit on one person's properties: its database refuses a person row whose properties
 * take more than 655,360 bytes (`pg_column_size`, after compression), and ingestion then keeps the
 * person as it was and records `person_properties_size_violation`. Compressed size cannot be
 * reproduced here, so the limit applies to the JSON's UTF-8 bytes: stricter for very repetitive
 * values, never looser. It also keeps a person and each event carrying its properties far below
 * MongoDB's 16 MB document limit.
 */
export const PERSON_PROPERTIES_LIMIT_BYTES = 655_360

/** Records the ingestion warning PostHog records when it refuses a person's properties. */
export function warnPersonPropertiesSize(
  ctx: Pick<EventContext, 'warn'>,
  personId: string,
  distinctId: string,
  eventUuid: string,
): void {
  ctx.warn('person_properties_size_violation', {
    personId,
    distinctId,
    eventUuid,
    message: 'Person properties exceeds size limit and was rejected',
  })
}

export function withinPersonPropertiesLimit(properties: Properties): boolean {
  const json = JSON.stringify(properties)
  // a UTF-8 byte is at least one UTF-16 unit and at most three: skip the count when the answer is sure
  if (json.length * 3 <= PERSON_PROPERTIES_LIMIT_BYTES) return true
  return (
    json.length <= PERSON_PROPERTIES_LIMIT_BYTES && Buffer.byteLength(json, 'utf8') <= PERSON_PROPERTIES_LIMIT_BYTES
  )
}

export const hasOwn = (object: Properties, key: string): boolean => Object.hasOwn(object, key)

export const ownValue = (object: Properties, key: string): unknown => (hasOwn(object, key) ? object[key] : undefined)
