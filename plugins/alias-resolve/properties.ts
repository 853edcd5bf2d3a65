/**
 * Property objects keyed by whatever names clients send (`$browser`, `a.b`, `__proto__`,
 * `constructor`). They are built on null-prototype objects and read through own keys only, so a
 * name is always data: it never reaches `Object.prototype` and never reads an inherited member.
 */
export type Properties = Record<string, unknown>

export const isPlainObject = (value: unknown): value is Properties => typeof value === 'object' && value !== null && !Array.isArray(value)

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

export const hasOwn = (object: Properties, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key)

export const ownValue = (object: Properties, key: string): unknown => (hasOwn(object, key) ? object[key] : undefined)
