/**
 * Commands run since the server started, by name, as serverStatus reports them in
 * `metrics.commands.<name>.total`: how the benchmarks count the round trips a workload costs.
 * Also the documents queries read (`metrics.queryExecutor.scannedObjects`, as MongoDB names it):
 * how a test shows a query used an index instead of reading the collection.
 *
 * When several threads run commands (reads beside writes), they share one table: each thread adds
 * to its own row (no two threads write one number), and the totals sum the rows.
 */
const SCANNED = 0
let columns = new Map<string, number>()
let width = 1
let table: Float64Array<ArrayBufferLike> = new Float64Array(width)
let row = 0
let rows = 1

/** The names counted (the known commands, so the table stays bounded); set once by dispatch.ts. */
export function countCommandsNamed(names: readonly string[]): void {
  columns = new Map([...names].sort().map((name, i) => [name, i + 1]))
  width = columns.size + 1
  table = new Float64Array(width)
}

/**
 * Counts into row `thread` of a table shared by `threads` threads: `shared` from the thread that
 * made it (every thread runs the same dispatch.ts, so they agree on the columns), or a new one.
 */
export function shareCounters(
  shared: SharedArrayBuffer | undefined,
  thread: number,
  threads: number,
): SharedArrayBuffer {
  const buffer = shared ?? new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT * width * threads)
  table = new Float64Array(buffer)
  row = thread
  rows = threads
  return buffer
}

function total(column: number): number {
  let sum = 0
  for (let r = 0; r < rows; r++) sum += table[r * width + column]
  return sum
}

export function countCommand(name: string): void {
  const column = columns.get(name)
  if (column !== undefined) table[row * width + column] += 1
}

export function commandTotals(): ReadonlyMap<string, number> {
  const totals = new Map<string, number>()
  for (const [name, column] of columns) {
    const sum = total(column)
    if (sum > 0) totals.set(name, sum)
  }
  return totals
}

/** A query (find, count, aggregate, update, delete) read one stored document to test or return it. */
export function countScannedObject(): void {
  table[row * width + SCANNED] += 1
}

export function scannedObjectsTotal(): number {
  return total(SCANNED)
}
