/**
 * Which worker consumes which partition, without a coordinator. Two JetStream key-value buckets:
 * `members`, where each worker rewrites its key every third of `leaseTtlMs` and the keys expire
 * after `leaseTtlMs`, and `leases`, one key per partition naming its holder (or `free`). Each
 * worker aims for its share, ceil(partitions / live workers): one with more hands partitions back,
 * one with fewer takes a partition that nobody ever held, that was handed back, or whose holder's
 * membership expired. Writes carry the revision read, so only one taker can win.
 *
 * One consumer per partition is what keeps a distinct_id's events in order, so a partition changes
 * hands only when the old holder cannot be running a batch of it any more:
 * - handed back: the holder stops the partition's consumer (its batch finishes and is
 *   acknowledged), then marks it free; the next worker consumes it at once;
 * - taken from a worker whose membership expired (killed, or cut off): the taker waits one more
 *   TTL before consuming, and a holder starts no batch once its last confirmed membership write is
 *   older than two thirds of the TTL (`mayRun`), so a batch it had started has finished.
 * A batch must therefore finish within one TTL (default 15 s, above the 10 s step timeout).
 */
import type { KV } from 'nats'
import type { Logger } from 'pino'

export interface LeaseHolder {
  gained(partition: number): void
  lost(partition: number): Promise<void>
}

export interface LeaseOptions {
  /** Partition keys, without expiry. */
  readonly leases: KV
  /** Membership keys, expiring after `ttlMs`. */
  readonly members: KV
  readonly workerId: string
  readonly partitions: number
  readonly ttlMs: number
  readonly holder: LeaseHolder
  readonly logger: Logger
}

interface Lease {
  revision: number
  releasing: boolean
  /** Set while waiting out a dead holder's last batch; the consumer starts when it fires. */
  grace?: NodeJS.Timeout
  started: boolean
}

const FREE = 'free'
const WRONG_LAST_SEQUENCE = 10071
const leaseKey = (partition: number) => `p${partition}`

export class PartitionLeases {
  private readonly leases = new Map<number, Lease>()
  private readonly releases = new Set<Promise<void>>()
  /** When the last membership write that succeeded was sent. */
  private aliveAt = 0
  private timer?: NodeJS.Timeout
  private ticking?: Promise<void>
  private stopped = false

  constructor(private readonly options: LeaseOptions) {}

  /** Partitions held and not being handed back. */
  get partitions(): number[] {
    return [...this.leases]
      .filter(([, l]) => !l.releasing)
      .map(([p]) => p)
      .sort((a, b) => a - b)
  }

  /** Whether a batch of this partition may start now: it is ours and our membership surely has not expired. */
  mayRun(partition: number): boolean {
    return this.leases.has(partition) && Date.now() - this.aliveAt < (this.options.ttlMs * 2) / 3
  }

  async start(): Promise<void> {
    await this.tick()
    this.schedule()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.ticking
    for (const partition of [...this.leases.keys()]) this.release(partition)
    while (this.releases.size) await Promise.all(this.releases)
    await this.options.members.delete(this.options.workerId).catch(() => undefined)
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = setTimeout(
      () => {
        this.ticking = this.tick().finally(() => this.schedule())
      },
      Math.max(50, Math.floor(this.options.ttlMs / 3)),
    )
  }

  /** One round: stay a member, check what we hold, hand back or take to reach our share. */
  async tick(): Promise<void> {
    const { members, workerId, logger } = this.options
    const sentAt = Date.now()
    try {
      await members.put(workerId, String(sentAt))
      this.aliveAt = sentAt
    } catch (error) {
      logger.warn({ err: error }, 'queue worker could not renew its membership')
    }
    await Promise.all([...this.leases].map(([partition, lease]) => this.confirm(partition, lease)))
    if (this.stopped) return
    const live = await this.liveWorkers()
    if (!live) return
    const share = Math.ceil(this.options.partitions / Math.max(1, live.size))
    for (const partition of this.partitions.slice(share).reverse()) this.release(partition)
    for (const partition of this.claimOrder()) {
      if (this.partitions.length >= share || this.stopped) break
      if (!this.leases.has(partition)) await this.claim(partition, live)
    }
  }

  /** Rewrites our own lease key: fails only when someone took the partition from us. */
  private async confirm(partition: number, lease: Lease): Promise<void> {
    try {
      lease.revision = await this.options.leases.update(leaseKey(partition), this.options.workerId, lease.revision)
    } catch (error) {
      // only a write on a newer revision means someone took it; an unreachable server changes nothing yet (mayRun gates the batches)
      if (
        this.leases.get(partition) !== lease ||
        (error as { api_error?: { err_code?: number } }).api_error?.err_code !== WRONG_LAST_SEQUENCE
      )
        return
      this.options.logger.warn({ partition, err: error }, 'queue worker lost a partition')
      this.leases.delete(partition)
      clearTimeout(lease.grace)
      this.track(this.options.holder.lost(partition))
    }
  }

  private async claim(partition: number, live: ReadonlySet<string>): Promise<void> {
    const { leases, workerId, ttlMs } = this.options
    const entry = await leases.get(leaseKey(partition)).catch(() => undefined)
    if (entry === undefined) return
    const holder = entry?.operation === 'PUT' ? entry.string() : FREE
    if (holder !== FREE && live.has(holder)) return
    const revision = await (entry
      ? leases.update(leaseKey(partition), workerId, entry.revision)
      : leases.create(leaseKey(partition), workerId)
    ).catch(() => undefined)
    if (revision === undefined || this.stopped) return
    const lease: Lease = { revision, releasing: false, started: false }
    this.leases.set(partition, lease)
    const begin = () => {
      lease.started = true
      this.options.holder.gained(partition)
    }
    if (holder === FREE) begin()
    else {
      this.options.logger.warn(
        { partition, previous: holder },
        'queue worker takes a partition whose worker is gone; it consumes after one lease TTL',
      )
      lease.grace = setTimeout(begin, ttlMs)
    }
  }

  /** Stops the partition's consumer, then marks the partition free. */
  private release(partition: number): void {
    const lease = this.leases.get(partition)
    if (!lease || lease.releasing) return
    lease.releasing = true
    clearTimeout(lease.grace)
    this.track(
      (async () => {
        if (lease.started) await this.options.holder.lost(partition)
        if (this.leases.get(partition) !== lease) return
        this.leases.delete(partition)
        await this.options.leases.update(leaseKey(partition), FREE, lease.revision).catch(() => undefined)
      })(),
    )
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'queue partition hand-back failed'))
      .finally(() => this.releases.delete(tracked))
    this.releases.add(tracked)
  }

  /** The ids of the workers whose membership has not expired; undefined when it cannot be read. */
  private async liveWorkers(): Promise<Set<string> | undefined> {
    const live = new Set<string>()
    try {
      for await (const key of await this.options.members.keys()) live.add(key)
    } catch (error) {
      this.options.logger.warn({ err: error }, 'queue worker could not list the workers')
      return undefined
    }
    return live
  }

  /** Workers start their search at different partitions, so they rarely race for the same keys. */
  private claimOrder(): number[] {
    const { partitions, workerId } = this.options
    let offset = 0
    for (let i = 0; i < workerId.length; i++) offset = (offset * 31 + workerId.charCodeAt(i)) % partitions
    return Array.from({ length: partitions }, (_, i) => (offset + i) % partitions)
  }
}
