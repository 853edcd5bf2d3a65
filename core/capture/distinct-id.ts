/**
 * The distinct_id of a wire event as one string (capture.md §1.6).
 */
import type { WireEvent } from './request.ts'

export const MAX_DISTINCT_ID_CHARS = 200

/** '' when the event carries no usable id; the caller drops such an event. */
export function distinctIdOf(event: WireEvent): string {
  const value = rawDistinctId(event)
  if (value === undefined || value === null) return ''
  const text = typeof value === 'string' ? value : canonicalJson(value, MAX_DISTINCT_ID_CHARS)
  return cutToScalars(text.replaceAll('\0', '\uFFFD'), MAX_DISTINCT_ID_CHARS)
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

/**
 * Compact JSON with object keys sorted, the way PostHog's capture prints a non-string id.
 * It stops once `limit` characters are written, since the id is cut there anyway; that also
 * bounds the recursion, because every level of nesting writes at least one character.
 */
export function canonicalJson(value: unknown, limit = Number.POSITIVE_INFINITY): string {
  const out: string[] = []
  let length = 0
  const write = (text: string) => {
    out.push(text)
    length += text.length
  }
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      write('[')
      for (let index = 0; index < node.length && length <= limit; index++) {
        if (index > 0) write(',')
        visit(node[index] === undefined ? null : node[index])
      }
      write(']')
    } else if (typeof node === 'object' && node !== null) {
      const record = node as Record<string, unknown>
      const keys = Object.keys(record).sort(byUtf8Bytes)
      write('{')
      for (let index = 0; index < keys.length && length <= limit; index++) {
        if (index > 0) write(',')
        write(`${JSON.stringify(keys[index])}:`)
        visit(record[keys[index]!])
      }
      write('}')
    } else {
      write(JSON.stringify(node) ?? 'null')
    }
  }
  visit(value)
  return out.join('')
}

/** serde_json keeps object keys in a BTreeMap, ordered by their UTF-8 bytes. */
function byUtf8Bytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
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
