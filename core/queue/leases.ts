/**
 * Which worker consumes which partition. Each partition has a lease, a key in a JetStream
 * key-value bucket whose entries expire `leaseTtlMs` after they were last written. A worker takes
 * a partition by creating its key (only one create wins) and keeps it by rewriting it every third
 * of the TTL. Workers also keep a membership key alive, and each aims for its share,
 * ceil(partitions / live workers): one with more hands partitions back, one with fewer takes free ones.
 *
 * One consumer per partition is what keeps a distinct_id's events in order, so a lease changes
 * hands only when the old holder cannot be running a batch of it any more:
 * - handing back: the holder stops the partition's consumer (its batch finishes and is
 *   acknowledged) while still renewing the lease, then marks the key free; a free key is taken at once;
 * - expiry (a worker killed, or cut off): the taker waits one more TTL before consuming, so a
 *   holder that lost its lease while a batch was running has finished it; a holder stops starting
 *   batches once its last confirmed renewal is older than two thirds of the TTL (`mayRun`).
 * Renewals never wait for a consumer to stop, so a slow batch cannot make other leases expire.
 * A batch must therefore finish within one TTL (default 15 s, above the 10 s step timeout).
 */
import type { KV } from 'nats'
import type { Logger } from 'pino'

export interface LeaseHolder {
  gained(partition: number): void
  lost(partition: number): Promise<void>
}

export interface LeaseOptions {
  readonly kv: KV
  readonly workerId: string
  readonly partitions: number
  readonly ttlMs: number
  readonly holder: LeaseHolder
  readonly logger: Logger
}

interface Lease {
  revision: number
  /** When the last successful renewal was sent. */
  renewedAt: number
  releasing: boolean
  /** Grace period after taking an expired lease: the consumer starts when it ends. */
  grace?: NodeJS.Timeout
  started: boolean
}

const FREE = 'free'
const leaseKey = (partition: number) => `lease.${partition}`
const memberKey = (workerId: string) => `member.${workerId}`

export class PartitionLeases {
  private readonly leases = new Map<number, Lease>()
  private readonly releases = new Set<Promise<void>>()
  private timer?: NodeJS.Timeout
  private ticking?: Promise<void>
  private stopped = false

  constructor(private readonly options: LeaseOptions) {}

  /** Partitions held and not being handed back. */
  get partitions(): number[] {
    return [...this.leases].filter(([, l]) => !l.releasing).map(([p]) => p).sort((a, b) => a - b)
  }

  /** Whether a batch of this partition may start now (the lease is ours and surely not expired). */
  mayRun(partition: number): boolean {
    const lease = this.leases.get(partition)
    return !!lease && Date.now() - lease.renewedAt < (this.options.ttlMs * 2) / 3
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
    await this.options.kv.delete(memberKey(this.options.workerId)).catch(() => undefined)
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => this.schedule())
    }, Math.max(50, Math.floor(this.options.ttlMs / 3)))
  }

  /** One round: announce ourselves, renew what we hold, hand back or take to reach our share. */
  async tick(): Promise<void> {
    const { kv, workerId, logger } = this.options
    await kv.put(memberKey(workerId), '1').catch((error: unknown) => logger.warn({ err: error }, 'queue worker could not announce itself'))
    await Promise.all([...this.leases].map(([partition, lease]) => this.renew(partition, lease)))
    if (this.stopped) return
    const share = Math.ceil(this.options.partitions / Math.max(1, await this.liveWorkers()))
    const held = this.partitions
    for (const partition of held.slice(share).reverse()) this.release(partition)
    for (const partition of this.claimOrder()) {
      if (this.partitions.length >= share || this.stopped) break
      if (!this.leases.has(partition)) await this.claim(partition)
    }
  }

  private async renew(partition: number, lease: Lease): Promise<void> {
    const sentAt = Date.now()
    try {
      lease.revision = await this.options.kv.update(leaseKey(partition), this.options.workerId, lease.revision)
      lease.renewedAt = sentAt
    } catch (error) {
      if (this.leases.get(partition) !== lease) return
      this.options.logger.warn({ partition, err: error }, 'queue worker lost a partition lease')
      this.leases.delete(partition)
      clearTimeout(lease.grace)
      this.track(this.options.holder.lost(partition))
    }
  }

  private async claim(partition: number): Promise<void> {
    const { kv, workerId, ttlMs } = this.options
    const sentAt = Date.now()
    const entry = await kv.get(leaseKey(partition)).catch(() => null)
    const handedBack = entry?.operation === 'PUT' && entry.string() === FREE
    if (entry?.operation === 'PUT' && !handedBack) return
    const revision = await (handedBack ? kv.update(leaseKey(partition), workerId, entry.revision) : kv.create(leaseKey(partition), workerId)).catch(() => undefined)
    if (revision === undefined || this.stopped) return
    const lease: Lease = { revision, renewedAt: sentAt, releasing: false, started: false }
    this.leases.set(partition, lease)
    const begin = () => {
      lease.started = true
      this.options.holder.gained(partition)
    }
    if (handedBack) begin()
    else lease.grace = setTimeout(begin, ttlMs)
  }

  /** Stops the partition's consumer while the lease is still renewed, then marks the key free. */
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
        await this.options.kv.update(leaseKey(partition), FREE, lease.revision).catch(() => undefined)
      })(),
    )
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.options.logger.warn({ err: error }, 'queue partition hand-back failed')).finally(() => this.releases.delete(tracked))
    this.releases.add(tracked)
  }

  private async liveWorkers(): Promise<number> {
    let live = 0
    try {
      for await (const key of await this.options.kv.keys('member.*')) if (key) live++
    } catch {
      return 1
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
