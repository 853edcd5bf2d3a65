/**
 * A tiny Prometheus-style registry: counters and duration sums with labels, rendered as text at
 * `GET /_metrics`. Enough to see drops, step failures and plugin timings without a dependency.
 */
type Labels = Readonly<Record<string, string>>

const counters = new Map<string, Map<string, number>>()
/** The labels of each series, by name and label key, for sums over some of them (counterSum). */
const seriesLabels = new Map<string, Labels>()

/** The key of each labels object counted so far: callers that count often pass the same frozen object. */
const keyOfLabels = new WeakMap<Labels, string>()

function labelKey(labels: Labels): string {
  const known = keyOfLabels.get(labels)
  if (known !== undefined) return known
  const key = Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`)
    .join(',')
  if (Object.isFrozen(labels)) keyOfLabels.set(labels, key)
  return key
}

/** Adds `by` to the counter `name{labels}`. */
export function count(name: string, labels: Labels = {}, by = 1): void {
  let series = counters.get(name)
  if (!series) counters.set(name, (series = new Map()))
  const key = labelKey(labels)
  if (!series.has(key)) seriesLabels.set(`${name}{${key}}`, { ...labels })
  series.set(key, (series.get(key) ?? 0) + by)
}

export function counterValue(name: string, labels: Labels = {}): number {
  return counters.get(name)?.get(labelKey(labels)) ?? 0
}

/** The sum of the series of `name` grouped by the value of `label` (this process's counts since it started). */
export function counterSumBy(name: string, label: string): Map<string, number> {
  const sums = new Map<string, number>()
  for (const [key, value] of counters.get(name) ?? []) {
    const group = seriesLabels.get(`${name}{${key}}`)?.[label]
    if (group !== undefined) sums.set(group, (sums.get(group) ?? 0) + value)
  }
  return sums
}

export function renderMetrics(): string {
  const lines: string[] = []
  for (const [name, series] of [...counters].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const [key, value] of series) lines.push(key ? `${name}{${key}} ${value}` : `${name} ${value}`)
  }
  return `${lines.join('\n')}\n`
}
