/**
 * Consumes one partition of the ingest stream while this worker holds its lease. Every (re)start
 * replaces the partition's durable consumer with a fresh one that delivers from the oldest
 * message still in the work-queue stream, i.e. the oldest one nobody acknowledged: a new owner,
 * or the same one after a failed batch, resumes exactly where the stream's order says, instead of
 * seeing newer messages before older ones come back from their ack wait.
 *
 * Messages are run in batches; the next batch starts only after the acknowledgements of the
 * previous one were confirmed by the server, so a crash can only make the last batch run again,
 * in the same order (and the (project, uuid) index stores its events once).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { AckPolicy, DeliverPolicy, nanos } from 'nats'
import type { ConsumerMessages, JsMsg } from 'nats'
import type { Logger } from 'pino'
import type { QueueConnection } from './connection.ts'
import { partitionFilter } from './message.ts'

/** Runs a batch; resolves with how many leading messages are done (processed and safe to acknowledge). */
export type BatchHandler = (batch: readonly JsMsg[]) => Promise<number>

export interface PartitionConsumerOptions {
  readonly queue: QueueConnection
  readonly partition: number
  readonly handle: BatchHandler
  /** False while the lease may have expired: then nothing is started (see leases.ts). */
  readonly mayRun: () => boolean
  readonly logger: Logger
}

const CONSUMER_NOT_FOUND = 10014

export class PartitionConsumer {
  private stopped = false
  /** Most messages per batch now: up to `batchSize`, less while batches run slow (see adapt). */
  private batchLimit: number
  private messages?: ConsumerMessages
  private readonly abort = new AbortController()
  private readonly done: Promise<void>

  private readonly queue: QueueConnection
  readonly partition: number
  private readonly logger: Logger

  constructor(private readonly options: PartitionConsumerOptions) {
    this.queue = options.queue
    this.partition = options.partition
    this.logger = options.logger
    // a new holder does not know how slow batches run here yet: it starts small and grows
    this.batchLimit = Math.ceil(options.queue.settings.batchSize / 8)
    this.done = this.loop()
  }

  /** Stops taking messages; resolves once the batch in flight is finished and acknowledged. */
  async stop(): Promise<void> {
    this.stopped = true
    this.abort.abort()
    this.messages?.stop()
    await this.done
  }

  private get name(): string {
    return `hedgerow-p${this.partition}`
  }

  private async loop(): Promise<void> {
    const { retryDelayMs } = this.queue.settings
    while (!this.stopped) {
      let healthy = false
      try {
        if (!this.options.mayRun()) throw new Error('the partition lease is not confirmed')
        await this.replaceConsumer()
        if (this.stopped) break
        const consumer = await this.queue.js.consumers.get(this.queue.settings.stream, this.name)
        this.messages = await consumer.consume({
          max_messages: this.queue.settings.batchSize * 2,
          abort_on_missing_resource: true,
        })
        this.logger.debug({ partition: this.partition }, 'queue partition consumer started')
        if (this.stopped) this.messages.stop()
        healthy = await this.drain(this.messages)
        this.logger.debug({ partition: this.partition, healthy }, 'queue partition consumer ended')
      } catch (error) {
        if (!this.stopped)
          this.logger.warn(
            { partition: this.partition, err: error },
            'queue partition consumer failed; resuming from the oldest unacknowledged event',
          )
      }
      if (!healthy && !this.stopped)
        await sleep(retryDelayMs, undefined, { signal: this.abort.signal }).catch(() => undefined)
    }
  }

  private async replaceConsumer(): Promise<void> {
    const { jsm, settings } = this.queue
    await jsm.consumers.delete(settings.stream, this.name).catch((error: unknown) => {
      if ((error as { api_error?: { err_code?: number } }).api_error?.err_code !== CONSUMER_NOT_FOUND) throw error
    })
    await jsm.consumers.add(settings.stream, {
      durable_name: this.name,
      filter_subject: partitionFilter(settings.subjectPrefix, this.partition),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(settings.ackWaitMs),
      max_ack_pending: settings.batchSize * 2,
    })
  }

  /** Collects what arrives while a batch runs into the next batch. False after a failed batch. */
  private async drain(messages: ConsumerMessages): Promise<boolean> {
    const buffer: JsMsg[] = []
    let running: Promise<void> | undefined
    let healthy = true
    const runBatches = async () => {
      await new Promise((resolve) => setImmediate(resolve)) // let the rest of a delivery burst arrive
      while (buffer.length && healthy && !this.stopped) {
        const batch = buffer.splice(0, this.batchLimit)
        healthy = await this.runBatch(batch)
      }
      if (!healthy) messages.stop()
      running = undefined
    }
    try {
      for await (const message of messages) {
        if (!healthy || this.stopped) continue
        buffer.push(message)
        running ??= runBatches()
      }
    } finally {
      // also when the subscription failed: the consumer is replaced only once no batch of it runs
      await running
    }
    return healthy
  }

  private async runBatch(batch: readonly JsMsg[]): Promise<boolean> {
    if (!this.options.mayRun()) {
      this.logger.debug({ partition: this.partition }, 'queue batch not started: the partition lease is not confirmed')
      return false
    }
    let done = 0
    const started = Date.now()
    try {
      done = await this.options.handle(batch)
    } catch (error) {
      this.logger.warn({ partition: this.partition, err: error }, 'queue batch failed')
    }
    this.adapt(batch.length, done, Date.now() - started)
    if (done > 0) {
      for (let i = 0; i < done - 1; i++) batch[i]!.ack()
      // the server handles one connection's messages in order: this confirmation covers the acks before it
      const confirmed = await batch[done - 1]!.ackAck().catch(() => false)
      if (!confirmed) {
        this.logger.warn(
          { partition: this.partition, seq: batch[done - 1]!.seq },
          'queue acknowledgements not confirmed; the batch runs again',
        )
        return false
      }
    }
    return done === batch.length
  }

  /**
   * Keeps each batch well inside the lease TTL, which is what lets a partition change hands
   * without two workers running it at once (leases.ts): halves the batch after one that took more
   * than a quarter of the TTL, and doubles it (up to `batchSize`) after full ones under an eighth. A slow database or a starved
   * CPU then costs throughput, not order.
   */
  private adapt(size: number, done: number, ms: number): void {
    const { leaseTtlMs, batchSize } = this.queue.settings
    this.logger.debug({ partition: this.partition, size, done, ms, limit: this.batchLimit }, 'queue batch ran')
    if (ms > leaseTtlMs)
      this.logger.warn(
        { partition: this.partition, size, ms, leaseTtlMs },
        'queue batch outlasted the lease TTL: had the worker lost its lease meanwhile, events of one distinct_id could have been applied out of order',
      )
    if (ms > leaseTtlMs / 4) this.batchLimit = Math.max(1, Math.min(this.batchLimit, size) >> 1)
    else if (ms < leaseTtlMs / 8 && size >= this.batchLimit) this.batchLimit = Math.min(batchSize, this.batchLimit * 2)
  }
}
