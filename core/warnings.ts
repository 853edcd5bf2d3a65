/**
 * Ingestion warnings (capture.md §2.13): every drop and every soft problem of an event, written to
 * the `ingestion_warnings` collection where operators read them through the admin API, and counted.
 *
 * A warning is about client data, so its size is bounded here, whatever the event held: the event
 * is kept whole only when its JSON is at most MAX_EVENT_EXCERPT_CHARS, else as an excerpt, and
 * details over MAX_DETAILS_CHARS keep a prefix of each value. An event with thousands of problems
 * then costs a few KB per warning instead of its whole size each time.
 */
import type { Db } from 'mongodb'
import type { Logger } from 'pino'
import { COLLECTIONS } from './model/collections.ts'
import { count } from './metrics.ts'
import { boundedJson } from './capture/bounded-json.ts'
import { cutToScalars } from './capture/distinct-id.ts'

/** An event whose JSON is longer is stored as the first this-many characters of it. */
export const MAX_EVENT_EXCERPT_CHARS = 4096
/** Details whose JSON is longer keep the first MAX_DETAIL_VALUE_CHARS of each value. */
export const MAX_DETAILS_CHARS = 2048
export const MAX_DETAIL_VALUE_CHARS = 256
const MAX_DETAIL_KEYS = 32
/** The event name and uuid of a cut event are copied out of the excerpt, at most this long. */
const MAX_NAME_CHARS = 200

/** What a warning stores of an event too large to keep whole. */
export interface EventExcerpt {
  truncated: true
  event?: string
  uuid?: string
  /** The start of the event's JSON (not parseable on its own). */
  excerpt: string
}

export interface IngestionWarning {
  project_id: number
  type: string
  created_at: Date
  details: Record<string, unknown>
  event?: unknown
}

/** Collects a request's warnings and writes them in one insert. */
export class WarningBatch {
  private readonly warnings: IngestionWarning[] = []
  /** One excerpt per event, however many warnings it has. */
  private readonly excerpts = new WeakMap<object, unknown>()

  constructor(private readonly projectId: number) {}

  add(type: string, details: Record<string, unknown> = {}, event?: unknown): void {
    count('hedgerow_ingestion_warnings_total', { type })
    this.warnings.push({
      project_id: this.projectId,
      type,
      created_at: new Date(),
      details: boundedDetails(details),
      event: this.excerptOf(event),
    })
  }

  private excerptOf(event: unknown): unknown {
    if (typeof event !== 'object' || event === null) return event
    let excerpt = this.excerpts.get(event)
    if (excerpt === undefined) this.excerpts.set(event, (excerpt = eventExcerpt(event)))
    return excerpt
  }

  get size(): number {
    return this.warnings.length
  }

  /** Best effort: a warning that cannot be written is logged, never a reason to fail the request. */
  async flush(db: Db, logger: Logger): Promise<void> {
    if (!this.warnings.length) return
    try {
      await db.collection(COLLECTIONS.ingestionWarnings).insertMany(this.warnings, { ordered: false })
    } catch (error) {
      logger.error({ err: error, warnings: this.warnings.length }, 'could not store ingestion warnings')
    }
  }
}

/** The event itself when its JSON is short enough, else an EventExcerpt. */
export function eventExcerpt(event: unknown): unknown {
  const json = boundedJson(event, MAX_EVENT_EXCERPT_CHARS)
  if (json.length <= MAX_EVENT_EXCERPT_CHARS) return event
  const excerpt: EventExcerpt = { truncated: true, excerpt: cutToScalars(json, MAX_EVENT_EXCERPT_CHARS) }
  const { event: name, uuid } = event as Record<string, unknown>
  if (typeof name === 'string') excerpt.event = cutToScalars(name, MAX_NAME_CHARS)
  if (typeof uuid === 'string') excerpt.uuid = cutToScalars(uuid, MAX_NAME_CHARS)
  return excerpt
}

/** The details themselves when their JSON is short enough, else each value cut, with `truncated: true`. */
export function boundedDetails(details: Record<string, unknown>): Record<string, unknown> {
  if (boundedJson(details, MAX_DETAILS_CHARS).length <= MAX_DETAILS_CHARS) return details
  const entries = Object.keys(details)
    .slice(0, MAX_DETAIL_KEYS)
    .map((key) => [key, boundedValue(details[key])] as const)
  return Object.fromEntries([...entries, ['truncated', true]])
}

function boundedValue(value: unknown): unknown {
  if (typeof value === 'string') return cutToScalars(value, MAX_DETAIL_VALUE_CHARS)
  if (typeof value !== 'object' || value === null) return value
  const json = boundedJson(value, MAX_DETAIL_VALUE_CHARS)
  return json.length <= MAX_DETAIL_VALUE_CHARS
    ? value
    : { truncated: true, excerpt: cutToScalars(json, MAX_DETAIL_VALUE_CHARS) }
}
