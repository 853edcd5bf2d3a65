/**
 * Ingestion health: events stored and dropped per project and minute, kept in the small
 * `ingestion_minutes` collection (one document per project and minute). Each process adds up its
 * requests' counts in memory and `$inc`s them into the collection every FLUSH_MS, at shutdown, and
 * before it answers the health route, so capture pays no database write for them. Being in the
 * database, the counts sum over every worker process (`server.workers`, queue workers) and survive
 * restarts (a crash loses at most FLUSH_MS of counts, never events); a TTL index
 * (core/model/collections.ts) removes minutes older than two hours.
 */
import type { Db } from 'mongodb'
import type { Logger } from 'pino'
import { COLLECTIONS } from '../model/collections.ts'

/** How far back the health route looks. */
export const WINDOW_MINUTES = 60

const MINUTE_MS = 60_000

interface MinuteDocument {
  project_id: number
  minute: Date
  stored: number
  dropped: number
  /** Drops per reason; a reason's `.` and leading `$` are stored as `_` (field-name rules). */
  drops: Record<string, number>
}

function minuteOf(date: Date): Date {
  return new Date(Math.floor(date.getTime() / MINUTE_MS) * MINUTE_MS)
}

function fieldName(reason: string): string {
  return reason.replace(/\./g, '_').replace(/^\$/, '_') || '_'
}

/** What one request did: events stored, and events dropped by reason. */
export interface IngestionTally {
  readonly stored: number
  readonly drops: ReadonlyMap<string, number>
}

/** How often a process adds the counts it gathered to the collection. */
const FLUSH_MS = 1000

/** The counts of one process since its last flush, per project and minute. */
export class IngestionCounts {
  private pending = new Map<string, { projectId: number; at: Date; stored: number; drops: Map<string, number> }>()
  private readonly timer: NodeJS.Timeout
  private flushing: Promise<void> = Promise.resolve()

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS)
    this.timer.unref()
  }

  add(projectId: number, tally: IngestionTally, at = new Date()): void {
    const minute = minuteOf(at)
    const key = `${projectId}:${minute.getTime()}`
    let entry = this.pending.get(key)
    if (!entry) this.pending.set(key, (entry = { projectId, at: minute, stored: 0, drops: new Map() }))
    entry.stored += tally.stored
    for (const [reason, n] of tally.drops) entry.drops.set(reason, (entry.drops.get(reason) ?? 0) + n)
  }

  /** Writes what was gathered so far; flushes in progress finish first, so counts keep their order. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const entries = [...this.pending.values()]
      this.pending = new Map()
      await Promise.all(entries.map((e) => recordIngestion(this.db, this.logger, e.projectId, e, e.at)))
    })
    return this.flushing
  }

  close(): Promise<void> {
    clearInterval(this.timer)
    return this.flush()
  }
}

/** Best effort, like the warnings: counts that cannot be written are logged, never fail the request. */
export async function recordIngestion(
  db: Db,
  logger: Logger,
  projectId: number,
  tally: IngestionTally,
  at = new Date(),
): Promise<void> {
  let dropped = 0
  const inc: Record<string, number> = { stored: tally.stored }
  for (const [reason, n] of tally.drops) {
    dropped += n
    const field = `drops.${fieldName(reason)}`
    inc[field] = (inc[field] ?? 0) + n
  }
  if (tally.stored === 0 && dropped === 0) return
  inc.dropped = dropped
  const minutes = db.collection<MinuteDocument>(COLLECTIONS.ingestionMinutes)
  const add = () => minutes.updateOne({ project_id: projectId, minute: minuteOf(at) }, { $inc: inc }, { upsert: true })
  try {
    // two first upserts of one minute racing: the loser hits the unique index, and its retry updates
    await add().catch((error: { code?: number }) => {
      if (error.code === 11000) return add()
      throw error
    })
  } catch (error) {
    logger.error({ err: error, projectId }, 'could not count ingestion health')
  }
}

/** The last WINDOW_MINUTES minutes, oldest first, every minute present (zero when nothing came). */
export async function ingestionHealth(db: Db, projectId: number, now = new Date()) {
  const last = minuteOf(now)
  const first = new Date(last.getTime() - (WINDOW_MINUTES - 1) * MINUTE_MS)
  const docs = await db
    .collection<MinuteDocument>(COLLECTIONS.ingestionMinutes)
    .find({ project_id: projectId, minute: { $gte: first, $lte: last } })
    .toArray()
  const byMinute = new Map(docs.map((doc) => [doc.minute.getTime(), doc]))
  const dropsByReason: Record<string, number> = {}
  const totals = { stored: 0, dropped: 0 }
  const minutes = []
  for (let t = first.getTime(); t <= last.getTime(); t += MINUTE_MS) {
    const doc = byMinute.get(t)
    const stored = doc?.stored ?? 0
    const dropped = doc?.dropped ?? 0
    totals.stored += stored
    totals.dropped += dropped
    for (const [reason, n] of Object.entries(doc?.drops ?? {})) dropsByReason[reason] = (dropsByReason[reason] ?? 0) + n
    minutes.push({ minute: new Date(t).toISOString(), stored, dropped })
  }
  const drops = Object.entries(dropsByReason)
    .map(([reason, count]) => ({ reason, count }))
    .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1))
  return { window_minutes: WINDOW_MINUTES, from: first.toISOString(), minutes, drops_by_reason: drops, totals }
}
