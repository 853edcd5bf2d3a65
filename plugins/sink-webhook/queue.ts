/**
 * The bounded delivery queue of sink-webhook. One POST is in flight at a time, carrying as many
 * queued events as fit in `maxBatchEvents`, so a slow receiver gets fewer, larger batches.
 *
 * Durable (a required sink): `enqueue` resolves when every event it was given has been delivered
 * and rejects once a POST carrying them has failed `maxRetries + 1` times or was refused; the
 * client then retries the request. Buffered (an optional sink): `enqueue` resolves at once, and
 * the oldest POST is retried with capped backoff until it succeeds, so acknowledged events wait
 * rather than vanish. Either way a full queue refuses new events (the sink fails, visibly); events
 * are dropped only when the receiver refuses them (4xx) or at the shutdown deadline, and both are
 * logged with their count.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { DeliveryError } from './post.ts'

export interface QueueOptions {
  readonly maxQueueEvents: number
  readonly maxBatchEvents: number
  readonly maxRetries: number
  readonly initialBackoffMs: number
  readonly maxBackoffMs: number
}

/** Sends one POST body; rejects with a DeliveryError (or anything else, taken as retryable). */
export type Send = (deliveryId: string, body: string, signal: AbortSignal) => Promise<unknown>

interface Waiter {
  remaining: number
  failed: boolean
  resolve(): void
  reject(error: unknown): void
}

interface Entry {
  readonly docs: readonly string[]
  readonly waiter?: Waiter
}

interface Post {
  readonly id: string
  readonly entries: readonly Entry[]
  readonly count: number
  readonly body: string
}

export class QueueFullError extends Error {
  constructor(queued: number, adding: number, limit: number) {
    super(
      `sink-webhook: the queue holds ${queued} events and takes at most ${limit}; ${adding} more were refused (the receiver is not keeping up)`,
    )
    this.name = 'QueueFullError'
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
  })
}

export class DeliveryQueue {
  private entries: Entry[] = []
  private queued = 0
  private running?: Promise<void>
  private closing = false
  /** Aborted at the shutdown deadline: cancels the POST in flight and any backoff wait. */
  private readonly stop = new AbortController()

  constructor(
    private readonly send: Send,
    private readonly options: QueueOptions,
    private readonly durable: boolean,
    private readonly logger: Logger,
  ) {}

  /** Events queued or in flight. */
  get size(): number {
    return this.queued
  }

  /** Queues serialized event documents (JSON texts). */
  enqueue(docs: readonly string[]): Promise<void> {
    if (this.closing) return Promise.reject(new Error('sink-webhook is shutting down'))
    if (docs.length === 0) return Promise.resolve()
    if (this.queued + docs.length > this.options.maxQueueEvents)
      return Promise.reject(new QueueFullError(this.queued, docs.length, this.options.maxQueueEvents))
    const chunks: string[][] = []
    for (let i = 0; i < docs.length; i += this.options.maxBatchEvents)
      chunks.push(docs.slice(i, i + this.options.maxBatchEvents))
    this.queued += docs.length
    if (!this.durable) {
      for (const chunk of chunks) this.entries.push({ docs: chunk })
      this.kick()
      return Promise.resolve()
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { remaining: chunks.length, failed: false, resolve, reject }
      for (const chunk of chunks) this.entries.push({ docs: chunk, waiter })
      this.kick()
    })
  }

  /** Delivers what is queued until it is empty or `drainTimeoutMs` has passed; reports the rest as lost. */
  async close(drainTimeoutMs: number): Promise<void> {
    this.closing = true
    const deadline = setTimeout(() => this.stop.abort(), drainTimeoutMs)
    try {
      while (this.running) await this.running
    } finally {
      clearTimeout(deadline)
      this.stop.abort()
    }
    const left = this.entries.splice(0)
    if (left.length)
      this.settle(left, new Error(`sink-webhook could not deliver within the ${drainTimeoutMs} ms shutdown deadline`))
  }

  private kick(): void {
    if (this.running || this.stop.signal.aborted) return
    this.running = this.pump().finally(() => {
      this.running = undefined
      if (this.entries.length) this.kick()
    })
  }

  private async pump(): Promise<void> {
    while (this.entries.length && !this.stop.signal.aborted) await this.deliver(this.take())
  }

  /** The oldest entries that fit in one POST (at least one); entries of a failed request are dropped. */
  private take(): Post {
    const entries: Entry[] = []
    let count = 0
    while (this.entries.length) {
      const next = this.entries[0]
      if (next.waiter?.failed) {
        this.entries.shift()
        this.queued -= next.docs.length
        continue
      }
      if (entries.length && count + next.docs.length > this.options.maxBatchEvents) break
      entries.push(next)
      count += next.docs.length
      this.entries.shift()
    }
    const id = randomUUID()
    const body = `{"delivery_id":${JSON.stringify(id)},"sent_at":${JSON.stringify(new Date().toISOString())},"events":[${entries.flatMap((e) => e.docs).join(',')}]}`
    return { id, entries, count, body }
  }

  private async deliver(post: Post): Promise<void> {
    if (post.count === 0) return
    for (let attempt = 0; ; attempt++) {
      try {
        await this.send(post.id, post.body, this.stop.signal)
        this.settle(post.entries)
        return
      } catch (error) {
        const retryable = !(error instanceof DeliveryError) || error.retryable
        const exhausted = attempt >= this.options.maxRetries
        if (!retryable || (this.durable && exhausted) || this.stop.signal.aborted) {
          this.settle(post.entries, error)
          return
        }
        const log = exhausted ? this.logger.error.bind(this.logger) : this.logger.warn.bind(this.logger)
        log(
          { err: error, attempt: attempt + 1, events: post.count, queued: this.queued },
          'sink-webhook delivery failed; retrying',
        )
        await sleep(
          this.backoff(attempt, error instanceof DeliveryError ? error.retryAfterMs : undefined),
          this.stop.signal,
        )
      }
    }
  }

  private backoff(attempt: number, retryAfterMs: number | undefined): number {
    const base = Math.min(this.options.maxBackoffMs, this.options.initialBackoffMs * 2 ** Math.min(attempt, 30))
    const jittered = base / 2 + (Math.random() * base) / 2
    return Math.min(this.options.maxBackoffMs, Math.max(jittered, retryAfterMs ?? 0))
  }

  private settle(entries: readonly Entry[], error?: unknown): void {
    let lost = 0
    for (const entry of entries) {
      this.queued -= entry.docs.length
      const waiter = entry.waiter
      if (!waiter) {
        if (error) lost += entry.docs.length
      } else if (error) {
        if (!waiter.failed) waiter.reject(error)
        waiter.failed = true
      } else if (--waiter.remaining === 0 && !waiter.failed) {
        waiter.resolve()
      }
    }
    if (lost) this.logger.error({ err: error, lostEvents: lost }, 'sink-webhook dropped acknowledged events')
  }
}
