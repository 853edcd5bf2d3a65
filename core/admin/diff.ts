/**
 * The difference between two JSON states, as the audit log shows it: one entry per changed leaf,
 * named by its dotted path (`filters.groups.0.rollout_percentage`). An absent side is left out of
 * the entry, so "added" and "removed" read apart from "set to null".
 */

export interface FieldChange {
  path: string
  before?: unknown
  after?: unknown
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((value, index) => jsonEqual(value, b[index]))
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    return (
      keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]))
    )
  }
  return false
}

/** `before` → `after`, without the top-level fields named in `ignore`. */
export function diffStates(before: unknown, after: unknown, ignore: readonly string[] = []): FieldChange[] {
  const changes: FieldChange[] = []
  walk(before, after, '', changes, new Set(ignore))
  return changes
}

function walk(before: unknown, after: unknown, path: string, out: FieldChange[], ignore: Set<string>): void {
  if (jsonEqual(before, after)) return
  const child = (key: string | number) => (path === '' ? String(key) : `${path}.${key}`)
  if (isObject(before) && isObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)])
    for (const key of keys) {
      if (path === '' && ignore.has(key)) continue
      walk(before[key], after[key], child(key), out, ignore)
    }
    return
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    for (let index = 0; index < Math.max(before.length, after.length); index++)
      walk(before[index], after[index], child(index), out, ignore)
    return
  }
  const change: FieldChange = { path }
  if (before !== undefined) change.before = before
  if (after !== undefined) change.after = after
  out.push(change)
}

/** A value as JSON holds it (dates become ISO strings, undefined fields go), for storing and comparing states. */
export function asJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value))
}
