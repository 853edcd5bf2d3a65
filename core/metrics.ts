/**
 * A tiny Prometheus-style registry: counters and duration sums with labels, rendered as text at
 * `GET /_metrics`. Enough to see drops, step failures and plugin timings without a dependency.
 */
type Labels = Readonly<Record<string, string>>

const counters = new Map<string, Map<string, number>>()

function labelKey(labels: Labels): string {
  return Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`)
    .join(',')
}

/** Adds `by` to the counter `name{labels}`. */
export function count(name: string, labels: Labels = {}, by = 1): void {
  let series = counters.get(name)
  if (!series) counters.set(name, (series = new Map()))
  const key = labelKey(labels)
  series.set(key, (series.get(key) ?? 0) + by)
}

export function counterValue(name: string, labels: Labels = {}): number {
  return counters.get(name)?.get(labelKey(labels)) ?? 0
}

export function renderMetrics(): string {
  const lines: string[] = []
  for (const [name, series] of [...counters].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const [key, value] of series) lines.push(key ? `${name}{${key}} ${value}` : `${name} ${value}`)
  }
  return `${lines.join('\n')}\n`
}
