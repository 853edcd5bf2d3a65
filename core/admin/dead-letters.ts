/**
 * Dead letters: events a step failed on for good (core/pipeline.ts), kept aside with the plugin,
 * hook and error. The admin API lists them, newest first, and replays one through the pipeline
 * once its cause is fixed. A replay runs the raw event with its dead letter's uuid, so the sinks'
 * unique (project, uuid) key stores it once however often it is replayed; a replayed dead letter
 * is marked, never deleted.
 */
import type { Context } from 'koa'
import { ObjectId } from 'mongodb'
import type { Db, Document } from 'mongodb'
import type { AuditLog, Project, WireEvent } from '../plugin-api.ts'
import type { IngestOutcome, IngestRequest } from '../pipeline.ts'
import { httpError } from '../errors.ts'
import { COLLECTIONS } from '../model/collections.ts'
import { newestFirstPage, pageLimit } from './cursor.ts'

const DEFAULT_LIMIT = 50
const MAX_LIMIT = 500

/** What replays an event: the pipeline, whose steps refuse to dead-letter it again. */
export interface Replayer {
  replay(request: IngestRequest): Promise<IngestOutcome>
}

const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : null)

function deadLetterJson(doc: Document) {
  return {
    id: String(doc._id),
    created_at: iso(doc.created_at),
    plugin: doc.plugin ?? null,
    hook: doc.hook ?? null,
    error: doc.error ?? null,
    uuid: doc.uuid ?? null,
    event: doc.event ?? null,
    replayed_at: iso(doc.replayed_at),
    replay_count: doc.replay_count ?? 0,
    replay_outcome: doc.replay_outcome ?? null,
  }
}

/** Newest first, a page at a time; `next` is the URL of the next page or null. */
export async function listDeadLetters(db: Db, project: Project, query: { cursor?: string; limit?: string }, url: URL) {
  const limit = pageLimit(query.limit, DEFAULT_LIMIT, MAX_LIMIT)
  const filter = { project_id: project.id }
  const { page, next } = await newestFirstPage(
    db.collection<Document & { created_at: Date }>(COLLECTIONS.deadLetters),
    filter,
    query.cursor,
    limit,
    url,
  )
  return { results: page.map(deadLetterJson), next }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The events a dead letter holds, as capture would receive them: the pipeline's dead letters hold
 * one event (and its uuid), the queue worker's the events of one message.
 */
function eventsOf(doc: Document): WireEvent[] {
  const events = Array.isArray(doc.event) ? doc.event : [doc.event]
  if (!events.length || !events.every(isObject))
    throw httpError('invalid_input', 'this dead letter holds no event that can be replayed', 'id')
  if (events.length === 1 && typeof doc.uuid === 'string' && events[0]!.uuid === undefined)
    return [{ ...events[0]!, uuid: doc.uuid } as WireEvent]
  return events as WireEvent[]
}

export async function replayDeadLetter(
  ctx: Context,
  deps: { db: Db; replayer: Replayer; audit: AuditLog },
  project: Project,
  id: string,
) {
  const letters = deps.db.collection(COLLECTIONS.deadLetters)
  const doc = /^[0-9a-f]{24}$/i.test(id)
    ? await letters.findOne({ project_id: project.id, _id: new ObjectId(id) })
    : null
  if (!doc) throw httpError('not_found', `no dead letter ${id} in project ${project.id}`, 'dead_letter_id')
  const receivedAt = doc.received_at instanceof Date ? doc.received_at : (doc.created_at as Date)
  const outcome = await deps.replayer.replay({
    project,
    events: eventsOf(doc),
    receivedAt,
    sentAt: doc.sent_at instanceof Date ? doc.sent_at : undefined,
    ip: typeof doc.ip === 'string' ? doc.ip : undefined,
    historicalMigration: doc.historical_migration === true,
  })
  const replayedAt = new Date()
  const updated = await letters.findOneAndUpdate(
    { _id: doc._id },
    { $set: { replayed_at: replayedAt, replay_outcome: outcome }, $inc: { replay_count: 1 } },
    { returnDocument: 'after' },
  )
  await deps.audit.record(ctx, {
    projectId: project.id,
    entityType: 'dead_letter',
    entityId: String(doc._id),
    action: 'replayed',
    before: { replayed_at: iso(doc.replayed_at), replay_count: doc.replay_count ?? 0 },
    after: { replayed_at: replayedAt.toISOString(), replay_count: (doc.replay_count ?? 0) + 1 },
    details: { uuid: doc.uuid ?? null, plugin: doc.plugin ?? null, hook: doc.hook ?? null, ...outcome },
  })
  return { dead_letter: deadLetterJson(updated ?? doc), outcome }
}
