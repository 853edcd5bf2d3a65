/**
 * Commands run since the server started, by name, as serverStatus reports them in
 * `metrics.commands.<name>.total`: how the benchmarks count the round trips a workload costs.
 * Also the documents queries read (`metrics.queryExecutor.scannedObjects`, as MongoDB names it):
 * how a test shows a query used an index instead of reading the collection.
 */
const counts = new Map<string, number>()

export function countCommand(name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1)
}

export function commandTotals(): ReadonlyMap<string, number> {
  return counts
}

let scannedObjects = 0

/** A query (find, count, aggregate, update, delete) read one stored document to test or return it. */
export function countScannedObject(): void {
  scannedObjects += 1
}

export function scannedObjectsTotal(): number {
  return scannedObjects
}
