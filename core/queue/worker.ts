/**
 * Worker side of queue mode: takes partition leases, consumes each leased partition, and runs its
 * events through the whole hook chain with the same Pipeline as inline mode. A message is
 * acknowledged only once its event was stored by every required sink (or dropped on purpose);
 * redelivery plus the (project, uuid) unique index make storage effectively-once.
 */
import os from 'node:os'
import { randomBytes } from 'node:crypto'
import type { JsMsg } from 'nats'
import type { Db } from 'mongodb'
import type { Logger } from 'pino'
import type { IngestRequest, Pipeline } from '../pipeline.ts'
import type { Project, WireEvent } from '../plugin-api.ts'
import { HttpError } from '../errors.ts'
import type { ProjectStore } from '../projects.ts'
import { COLLECTIONS } from '../model/collections.ts'
import { count } from '../metrics.ts'
import type { QueueConnection } from './connection.ts'
import { PartitionLeases } from './leases.ts'
import { PartitionConsumer } from './partition-consumer.ts'
import { decodeQueuedEvent, requestKey } from './message.ts'
import type { QueuedEvent } from './message.ts'

export interface WorkerDeps {
  readonly queue: QueueConnection
  readonly pipeline: Pipeline
  readonly projects: ProjectStore
  readonly db: Db
  readonly logger: Logger
}

/** Characters a dead letter keeps of each identifying field of an event too large to store. */
const EXCERPT_CHARS = 200

/** Consecutive messages of one request: one pipeline batch, as in inline mode. */
interface Group {
  end: number
  readonly events: QueuedEvent[]
  readonly unreadable?: string
}

export class QueueWorker {
  readonly id = `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`.replace(/[^A-Za-z0-9_-]/g, '_')
  private readonly consumers = new Map<number, PartitionConsumer>()
  private leases?: PartitionLeases

  constructor(private readonly deps: WorkerDeps) {}

  /** Partitions this worker consumes now. */
  get partitions(): number[] {
    return this.leases?.partitions ?? []
  }

  async start(): Promise<void> {
    const { queue, logger } = this.deps
    const { settings } = queue
    const leases = await queue.js.views.kv(`${settings.stream}_leases`, { history: 1, replicas: settings.replicas })
    const members = await queue.js.views.kv(`${settings.stream}_members`, {
      ttl: settings.leaseTtlMs,
      history: 1,
      replicas: settings.replicas,
    })
    this.leases = new PartitionLeases({
      leases,
      members,
      workerId: this.id,
      partitions: settings.partitions,
      ttlMs: settings.leaseTtlMs,
      logger,
      holder: {
        gained: (partition) => {
          logger.info({ worker: this.id, partition }, 'queue worker consumes a partition')
          this.consumers.set(
            partition,
            new PartitionConsumer({
              queue,
              partition,
              logger,
              handle: (batch) => this.handle(batch),
              mayRun: () => this.leases!.mayRun(partition),
            }),
          )
        },
        lost: async (partition) => {
          const consumer = this.consumers.get(partition)
          this.consumers.delete(partition)
          await consumer?.stop()
        },
      },
    })
    await this.leases.start()
  }

  async stop(): Promise<void> {
    await this.leases?.stop()
  }

  /** Runs a batch; resolves with the number of leading messages that are done. */
  private async handle(batch: readonly JsMsg[]): Promise<number> {
    const groups = groupByRequest(batch)
    const projects = new Map<number, Project | undefined>()
    for (const group of groups) {
      const id = group.events[0]?.projectId
      if (id !== undefined && !projects.has(id)) projects.set(id, await this.deps.projects.byId(id))
    }
    // Started in stream order without awaiting in between: the pipeline's per-distinct_id lock keeps that order.
    const runs = groups.map((group) => {
      const first = group.events[0]
      if (!first) return this.deadLetter(group.unreadable ?? 'unreadable message', undefined, null)
      const project = projects.get(first.projectId)
      if (!project)
        return this.deadLetter(
          `project ${first.projectId} does not exist`,
          first.projectId,
          group.events.map((e) => e.event),
        )
      return this.ingest(project, group.events)
    })
    const results = await Promise.allSettled(runs)
    let done = 0
    for (const [index, result] of results.entries()) {
      if (result.status === 'rejected') {
        this.deps.logger.warn(
          { worker: this.id, err: result.reason },
          'queue batch stopped at a failed request; it runs again from there',
        )
        break
      }
      done = groups[index]!.end
    }
    count('hedgerow_queue_events_processed_total', {}, done)
    return done
  }

  /**
   * Runs one request's events. Capture acknowledged them before any step ran, so an event a step
   * made too large to store (the sink's 413) cannot go back to the client: it would stop its
   * partition for good. The events then run one by one; the refused ones are set aside, the rest stored.
   */
  private async ingest(project: Project, events: readonly QueuedEvent[]): Promise<void> {
    const request = (some: readonly QueuedEvent[]): IngestRequest => {
      const first = some[0]!
      return {
        project,
        events: some.map((e) => e.event),
        receivedAt: first.receivedAt,
        sentAt: first.sentAt,
        ip: first.ip,
        historicalMigration: first.historicalMigration,
      }
    }
    try {
      await this.deps.pipeline.ingest(request(events))
    } catch (error) {
      if (!refusedForGood(error)) throw error
      for (const queued of events) {
        try {
          await this.deps.pipeline.ingest(request([queued]))
        } catch (eventError) {
          if (!refusedForGood(eventError)) throw eventError
          await this.deadLetter(eventError.detail, project.id, excerpt(queued.event))
        }
      }
    }
  }

  private async deadLetter(error: string, projectId: number | undefined, events: unknown): Promise<void> {
    this.deps.logger.warn({ worker: this.id, projectId, error }, 'queue message set aside')
    await this.deps.db.collection(COLLECTIONS.deadLetters).insertOne({
      project_id: projectId ?? null,
      created_at: new Date(),
      plugin: 'queue',
      hook: 'consume',
      error,
      event: events,
    })
  }
}

/** An error that running the request again cannot change (a 4xx the sink answered, such as 413). */
function refusedForGood(error: unknown): error is HttpError {
  return error instanceof HttpError && !error.retryable
}

/** What a dead letter keeps of an event too large to store: enough to find it, bounded. */
function excerpt(event: WireEvent): Record<string, string> {
  const field = (value: unknown) =>
    (typeof value === 'string' ? value : (JSON.stringify(value) ?? '')).slice(0, EXCERPT_CHARS)
  return { uuid: field(event.uuid), event: field(event.event), distinct_id: field(event.distinct_id) }
}

function groupByRequest(batch: readonly JsMsg[]): Group[] {
  const groups: Group[] = []
  let current: { key: string; events: QueuedEvent[] } | undefined
  batch.forEach((message, index) => {
    let queued: QueuedEvent
    try {
      queued = decodeQueuedEvent(message.string())
    } catch (error) {
      current = undefined
      groups.push({
        end: index + 1,
        events: [],
        unreadable: `unreadable message ${message.seq}: ${(error as Error).message}`,
      })
      return
    }
    const key = requestKey(queued)
    if (current?.key === key) {
      current.events.push(queued)
      groups[groups.length - 1]!.end = index + 1
      return
    }
    current = { key, events: [queued] }
    groups.push({ end: index + 1, events: current.events })
  })
  return groups
}
