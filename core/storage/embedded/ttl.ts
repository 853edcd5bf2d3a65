import { decode, isPlainObject, type Doc } from './bson/codec.ts'
import type { Catalog } from './engine/catalog.ts'
import { encodeKey, TypeMarker } from './engine/key-encoding.ts'

/** Deletes per index per pass, so one pass never stalls the server for long. */
const MAX_DELETES_PER_PASS = 50_000
const POLL_MS = 250

function datesAt(doc: Doc, path: string): Date[] {
  let values: unknown[] = [doc]
  for (const part of path.split('.')) {
    values = values.flatMap((v) => (Array.isArray(v) ? v : [v])).map((v) => (isPlainObject(v) ? v[part] : undefined))
  }
  return values.flatMap((v) => (Array.isArray(v) ? v : [v])).filter((v): v is Date => v instanceof Date)
}

/**
 * MongoDB's TTL monitor: every `ttlMonitorSleepSecs` (60 by default, settable with
 * setParameter), removes documents whose indexed date (the earliest, for an array) is older than
 * the index's expireAfterSeconds. Candidates come from the index's date range, not a scan.
 */
export class TtlMonitor {
  private lastRun = Date.now()
  private readonly timer: NodeJS.Timeout
  private running = false

  constructor(
    private readonly catalog: Catalog,
    private readonly sleepSecs: () => number,
    private readonly afterPass: (deleted: number) => Promise<void>,
    private readonly onError: (error: unknown) => void,
    /** Runs one pass as one transaction of the store. */
    private readonly transact: <T>(fn: () => T) => T = (fn) => fn(),
  ) {
    this.timer = setInterval(() => this.tick(), POLL_MS)
    this.timer.unref()
  }

  private tick(): void {
    if (this.running || Date.now() - this.lastRun < this.sleepSecs() * 1000) return
    this.running = true
    this.lastRun = Date.now()
    let deleted = 0
    try {
      deleted = this.transact(() => this.pass(new Date()))
    } catch (error) {
      this.onError(error)
    }
    this.afterPass(deleted)
      .catch(this.onError)
      .finally(() => {
        this.running = false
      })
  }

  /** One pass over every TTL index; returns how many documents it removed. */
  pass(now: Date): number {
    let total = 0
    for (const coll of [...this.catalog.all()]) {
      for (const index of coll.readyIndexes) {
        const seconds = index.spec.expireAfterSeconds
        if (seconds === undefined || index.fields.length !== 1) continue
        const cutoff = now.getTime() - seconds * 1000
        const ids: string[] = []
        for (const entry of index.entries.range(TypeMarker.date, encodeKey(new Date(cutoff)), false)) {
          ids.push(entry.id)
          if (ids.length >= MAX_DELETES_PER_PASS) break
        }
        for (const id of new Set(ids)) {
          const raw = coll.raw(id)
          if (!raw) continue
          const doc = decode(raw)
          const dates = datesAt(doc, index.fields[0].path)
          if (dates.length > 0 && Math.min(...dates.map((d) => d.getTime())) < cutoff) {
            coll.remove(doc)
            total += 1
          }
        }
      }
    }
    return total
  }

  close(): void {
    clearInterval(this.timer)
  }
}
