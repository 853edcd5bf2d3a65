import { asciiLower, toText } from './values.ts'

/** Substring, prefix and suffix tests lowercase ASCII only, as the server does. */
export function containsText(filterValue: unknown, propertyValue: unknown): boolean {
  return asciiLower(toText(propertyValue)).includes(asciiLower(toText(filterValue)))
}

export function startsWithText(filterValue: unknown, propertyValue: unknown): boolean {
  return asciiLower(toText(propertyValue)).startsWith(asciiLower(toText(filterValue)))
}

export function endsWithText(filterValue: unknown, propertyValue: unknown): boolean {
  return asciiLower(toText(propertyValue)).endsWith(asciiLower(toText(filterValue)))
}

/** `icontains_multi`: a single value or a list; any contained element matches. */
export function containsAnyText(filterValue: unknown, propertyValue: unknown): boolean {
  const haystack = asciiLower(toText(propertyValue))
  const needles = Array.isArray(filterValue) ? filterValue : [filterValue]
  return needles.some((needle) => haystack.includes(asciiLower(toText(needle))))
}
