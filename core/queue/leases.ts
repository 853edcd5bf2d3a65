/**
 * Which worker consumes which partition. Each partition has a lease, a key in a JetStream
 * key-value bucket whose entries expire after `leaseTtlMs`: a worker creates the key to take the
 * partition (only one create can win) and rewrites it every third of the TTL to keep it. Workers
 * also keep a membership key alive, and each aims for its share, ceil(partitions / live workers):
 * one with more than its share hands the extra partitions back, one with fewer takes free ones.
 * A worker that dies stops renewing, so its leases expire and the others take its partitions.
 *
 * `lost` is awaited before a lease is given back, so the partition's batch in flight is finished
 * and acknowledged before anyone else may consume it: one consumer per partition keeps one
 * distinct_id's events in order.
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

const leaseKey = (partition: number) => `lease.${partition}`
const memberKey = (workerId: string) => `member.${workerId}`

export class PartitionLeases {
  /** Partition → revision of our lease entry (needed to renew it). */
  private readonly held = new Map<number, number>()
  private timer?: NodeJS.Timeout
  private ticking?: Promise<void>
  private stopped = false

  constructor(private readonly options: LeaseOptions) {}

  get partitions(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b)
  }

  async start(): Promise<void> {
    await this.tick()
    this.schedule()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.ticking
    await Promise.all([...this.held.keys()].map((p) => this.release(p)))
    await this.options.kv.delete(memberKey(this.options.workerId)).catch(() => undefined)
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => this.schedule())
    }, Math.max(100, Math.floor(this.options.ttlMs / 3)))
  }

  /** One round: announce ourselves, renew what we hold, give back or take to reach our share. */
  async tick(): Promise<void> {
    const { kv, workerId, partitions, logger } = this.options
    try {
      await kv.put(memberKey(workerId), '1')
    } catch (error) {
      logger.warn({ err: error }, 'queue worker could not announce itself')
    }
    for (const [partition, revision] of [...this.held]) {
      try {
        this.held.set(partition, await kv.update(leaseKey(partition), workerId, revision))
      } catch (error) {
        logger.warn({ partition, err: error }, 'queue worker lost a partition lease')
        this.held.delete(partition)
        await this.options.holder.lost(partition)
      }
    }
    if (this.stopped) return
    const share = Math.ceil(partitions / Math.max(1, await this.liveWorkers()))
    for (const partition of this.partitions.reverse()) {
      if (this.held.size <= share) break
      await this.release(partition)
    }
    for (const partition of this.claimOrder()) {
      if (this.held.size >= share || this.stopped) break
      if (this.held.has(partition)) continue
      const revision = await kv.create(leaseKey(partition), workerId).catch(() => undefined)
      if (revision === undefined) continue
      this.held.set(partition, revision)
      this.options.holder.gained(partition)
    }
  }

  private async release(partition: number): Promise<void> {
    const revision = this.held.get(partition)
    this.held.delete(partition)
    await this.options.holder.lost(partition)
    if (revision !== undefined) await this.options.kv.delete(leaseKey(partition), { previousSeq: revision }).catch(() => undefined)
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
