/**
 * Coalesces the single-key reads and writes issued while events are processed concurrently into
 * one database command per batch (DataLoader style). A request of 100 events with 100 distinct
 * ids would otherwise make 100 sequential-in-effect round trips for the same kind of lookup.
 *
 * Consistency: a call joins the batch that is still collecting, and that batch is sent after the
 * call was made (on the next turn of the event loop). Every caller therefore sees at least the
 * writes that completed before its call, exactly as with its own `findOne`; no result is ever
 * reused for a later call.
 *
 * With `spacingMs` (the flags reads of persons and groups), a call made within that time after a
 * load of a single key waits until the spacing has passed, with every call made meanwhile.
 * Requests that arrive one by one (page loads, an open loop) then share reads as a burst's do,
 * each of them still read after it was made. A call after a quiet spell, or after a load that
 * already carried several keys (requests arriving in bursts, which share loads without waiting),
 * is sent on the next turn, so an idle or bursty service answers as fast as without it.
 */

import type { CoalescerOptions } from '../plugin-api.ts'

/** Most keys per command, so one `$in` or bulkWrite stays small however much load piles up. */
const MAX_BATCH = 500

interface Waiter<V> {
  resolve(value: V | undefined): void
  reject(error: unknown): void
}

interface Pending<K, V> {
  key: K
  waiters: Waiter<V>[]
}

/**
 * Loads the values of many keys in one call. `load` answers a map keyed by `id(key)`; a key
 * missing from it resolves to undefined.
 */
export class Coalescer<K, V> {
  private collecting = new Map<string, Pending<K, V>>()
  private scheduled = false
  private readonly spacingMs: number
  private lastLoadAt = Number.NEGATIVE_INFINITY
  private lastLoadSize = 0

  constructor(
    private readonly id: (key: K) => string,
    private readonly load: (keys: K[]) => Promise<ReadonlyMap<string, V>>,
    options: CoalescerOptions = {},
  ) {
    this.spacingMs = options.spacingMs ?? 0
  }

  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const id = this.id(key)
      const pending = this.collecting.get(id)
      if (pending) pending.waiters.push({ resolve, reject })
      else this.collecting.set(id, { key, waiters: [{ resolve, reject }] })
      if (this.collecting.size >= MAX_BATCH) this.dispatch()
      else if (!this.scheduled) this.schedule()
    })
  }

  private schedule(): void {
    this.scheduled = true
    const wait = this.lastLoadSize === 1 ? this.lastLoadAt + this.spacingMs - performance.now() : 0
    if (this.spacingMs > 0 && wait > 0) setTimeout(() => this.dispatch(), wait)
    else setImmediate(() => this.dispatch())
  }

  private dispatch(): void {
    this.scheduled = false
    if (!this.collecting.size) return
    const batch = this.collecting
    this.collecting = new Map()
    this.lastLoadAt = performance.now()
    this.lastLoadSize = batch.size
    this.load([...batch.values()].map((pending) => pending.key)).then(
      (values) => {
        for (const [id, pending] of batch) for (const waiter of pending.waiters) waiter.resolve(values.get(id))
      },
      (error: unknown) => {
        for (const pending of batch.values()) for (const waiter of pending.waiters) waiter.reject(error)
      },
    )
  }
}

/** Groups keys by project, for loaders that issue one command per project. */
export function byProject<K extends { projectId: number }>(keys: readonly K[]): Map<number, K[]> {
  const groups = new Map<number, K[]>()
  for (const key of keys) {
    const group = groups.get(key.projectId)
    if (group) group.push(key)
    else groups.set(key.projectId, [key])
  }
  return groups
}
