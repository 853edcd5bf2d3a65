/**
 * Runs the events of one capture request through the step hooks, then hands the survivors to the
 * sinks (design.md §2). Resolves once every kept event is stored by every required sink or was
 * dropped on purpose; throws a 503 HttpError when the client must retry.
 */
import type { Db } from 'mongodb'
import type { Logger } from 'pino'
import type { EventContext, IngestEvent, Project, SinkBatch, WireEvent } from './plugin-api.ts'
import { StepError } from './isolation.ts'
import type { Engine } from './engine.ts'
import { isDropped, uuidv7 } from './plugin-api.ts'
import { fromWire, withUuid } from './event.ts'
import { HttpError, httpError } from './errors.ts'
import { KeyedLock } from './keyed-lock.ts'
import { WarningBatch } from './warnings.ts'
import { COLLECTIONS } from './model/collections.ts'
import { count } from './metrics.ts'
import { IngestionCounts } from './admin/health.ts'

export interface IngestRequest {
  readonly project: Project
  readonly events: readonly WireEvent[]
  readonly receivedAt: Date
  readonly sentAt?: Date
  readonly ip?: string
  readonly historicalMigration: boolean
}

export interface IngestOutcome {
  readonly stored: number
  readonly dropped: number
}

type Slot = { kind: 'kept'; event: IngestEvent } | { kind: 'gone'; reason: string }

/** A replay (of a dead letter) refuses to dead-letter the event again: it answers 409 instead. */
interface RunOptions {
  readonly replay?: boolean
}

/** The drop reason of an event set aside as a dead letter (its ingestion warning's type too). */
export const DEAD_LETTERED = 'event_dead_lettered'

export class Pipeline {
  private readonly order = new KeyedLock()
  /** Events stored and dropped per project and minute, for the ingestion health route. */
  readonly counts: IngestionCounts

  constructor(
    private readonly engine: Engine,
    private readonly db: Db,
    private readonly logger: Logger,
  ) {
    this.counts = new IngestionCounts(db, logger)
  }

  /** Saves the ingestion counts not yet written; events themselves are never held here. */
  close(): Promise<void> {
    return this.counts.close()
  }

  /** Runs a dead letter's event again: the same as `ingest`, but a step that still fails answers 409. */
  replay(request: IngestRequest): Promise<IngestOutcome> {
    return this.ingest(request, { replay: true })
  }

  async ingest(request: IngestRequest, options: RunOptions = {}): Promise<IngestOutcome> {
    const warnings = new WarningBatch(request.project.id)
    const slots: Slot[] = new Array(request.events.length)
    const deadLetters: Record<string, unknown>[] = []
    try {
      await this.runSteps(request, slots, warnings, deadLetters, options)
      if (deadLetters.length) await this.db.collection(COLLECTIONS.deadLetters).insertMany(deadLetters)
      const kept: IngestEvent[] = []
      const drops = new Map<string, number>()
      for (const slot of slots)
        if (slot.kind === 'kept') kept.push(slot.event)
        else drops.set(slot.reason, (drops.get(slot.reason) ?? 0) + 1)
      if (kept.length)
        await this.sink({
          project: request.project,
          events: kept,
          receivedAt: request.receivedAt,
          historicalMigration: request.historicalMigration,
        })
      count('hedgerow_events_stored_total', {}, kept.length)
      // counted once the request is answered 200: a 503 the client retries would count twice
      this.counts.add(request.project.id, { stored: kept.length, drops })
      return { stored: kept.length, dropped: request.events.length - kept.length }
    } finally {
      await warnings.flush(this.db, this.logger)
    }
  }

  /** Events of one distinct_id run in order; different ids run concurrently, unless historical. */
  private async runSteps(
    request: IngestRequest,
    slots: Slot[],
    warnings: WarningBatch,
    deadLetters: Record<string, unknown>[],
    options: RunOptions,
  ): Promise<void> {
    const byKey = new Map<string, number[]>()
    const events = request.events.map((raw) => fromWire(raw, request))
    events.forEach((event, index) => {
      const key = request.historicalMigration ? '' : event.distinctId
      const indexes = byKey.get(key)
      if (indexes) indexes.push(index)
      else byKey.set(key, [index])
    })
    await Promise.all(
      [...byKey].map(([key, indexes]) =>
        this.order.run(`${request.project.id}:${key}`, async () => {
          const sequence = new Map<string, unknown>()
          for (const index of indexes)
            slots[index] = await this.runEvent(
              request,
              request.events[index],
              events[index],
              sequence,
              warnings,
              deadLetters,
              options,
            )
        }),
      ),
    )
  }

  private async runEvent(
    request: IngestRequest,
    raw: WireEvent,
    event: IngestEvent,
    sequence: Map<string, unknown>,
    warnings: WarningBatch,
    deadLetters: Record<string, unknown>[],
    options: RunOptions,
  ): Promise<Slot> {
    const ctx: EventContext = {
      project: request.project,
      raw,
      receivedAt: request.receivedAt,
      sentAt: request.sentAt,
      ip: request.ip,
      historicalMigration: request.historicalMigration,
      logger: this.logger,
      warn: (type, details) => warnings.add(type, details, raw),
      sequence,
    }
    try {
      const { value, droppedBy } = await this.engine.runEvent(event, ctx)
      if (droppedBy !== undefined && isDropped(value)) {
        count('hedgerow_events_dropped_total', { step: droppedBy, reason: value.reason })
        warnings.add(value.reason, { step: droppedBy, ...value.details }, raw)
        this.engine.eventDropped(value, ctx)
        return { kind: 'gone', reason: value.reason }
      }
      return { kind: 'kept', event: withUuid(value as IngestEvent) }
    } catch (error) {
      if (!(error instanceof StepError) || error.retryable)
        throw error instanceof StepError ? httpError('unavailable', `${error.message}; retry the request`) : error
      if (options.replay) throw httpError('conflict', `the event still fails: ${error.message}`)
      // A non-retryable step error would fail on every retry: keep the event aside, acknowledge it.
      deadLetters.push({
        project_id: request.project.id,
        created_at: new Date(),
        plugin: error.plugin,
        hook: error.hook,
        error: error.message,
        // what a replay needs to run the event as it first ran: the request's facts and a fixed
        // uuid, so that replaying an event sent without one stores it once however often it runs
        event: raw,
        uuid: event.uuid || uuidv7(event.timestamp),
        received_at: request.receivedAt,
        sent_at: request.sentAt ?? null,
        ip: request.ip ?? null,
        historical_migration: request.historicalMigration,
        replayed_at: null,
      })
      warnings.add(DEAD_LETTERED, { plugin: error.plugin, hook: error.hook }, raw)
      return { kind: 'gone', reason: DEAD_LETTERED }
    }
  }

  private async sink(batch: SinkBatch): Promise<void> {
    const outcomes = await this.engine.runSinks(batch)
    const failed = outcomes.filter((outcome) => outcome.required && outcome.error)
    if (!failed.length) return
    // A required sink that refused the request itself (an event it can never store, 413) answers
    // for it: a retry would fail the same way, where a 503 would have the client retry forever.
    const refused = failed.find((outcome) => outcome.error instanceof HttpError && !outcome.error.retryable)
    if (refused) throw refused.error
    throw httpError(
      'unavailable',
      `storage is unavailable (${failed.map((f) => f.plugin).join(', ')}); retry the request`,
    )
  }
}
