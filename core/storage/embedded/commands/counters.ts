/**
 * Commands run since the server started, by name, as serverStatus reports them in
 * `metrics.commands.<name>.total`: how the benchmarks count the round trips a workload costs.
 */
const counts = new Map<string, number>()

export function countCommand(name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1)
}

export function commandTotals(): ReadonlyMap<string, number> {
  return counts
}
