/**
 * Following the events collection as events are stored: a change stream of its inserts (so only
 * events that were really stored, by this process or any other), and on resume the events stored
 * after the last one a client saw. The id of an event is its document's ObjectId, which the driver
 * gives it when it is inserted: ids sort in insertion order and survive a restart, unlike the
 * change stream's resume tokens (the embedded store does not keep its history across restarts).
 */
import { ObjectId } from 'mongodb'
import type { ChangeStream, ChangeStreamInsertDocument, Collection, Filter } from 'mongodb'
import type {
  EventDocument,
  EventsFollowQuery,
  EventsFollower,
  EventsListener,
  StoredEvent,
} from '../../core/plugin-api.ts'
import { httpError, unavailable } from '../../core/plugin-api.ts'

const DEFAULT_CATCH_UP = 500

type Stored = EventDocument & { _id: ObjectId }

function storedEvent(doc: Stored): StoredEvent {
  const { _id, ...document } = doc
  return { id: _id.toHexString(), document }
}

function afterId(after: string): ObjectId {
  if (!/^[0-9a-f]{24}$/.test(after))
    throw httpError('invalid_input', 'Last-Event-ID is not an event id this stream sent', 'Last-Event-ID')
  return new ObjectId(after)
}

export async function followEvents(
  collection: Collection<EventDocument>,
  projectId: number,
  query: EventsFollowQuery,
  listener: EventsListener,
): Promise<EventsFollower> {
  const since = query.after === undefined ? undefined : afterId(query.after)
  const match: Record<string, unknown> = { operationType: 'insert', 'fullDocument.project_id': projectId }
  const filter: Filter<Stored> = { project_id: projectId }
  if (query.event !== undefined) {
    match['fullDocument.event'] = query.event
    filter.event = query.event
  }
  if (query.distinctId !== undefined) {
    match['fullDocument.distinct_id'] = query.distinctId
    filter.distinct_id = query.distinctId
  }
  const stream = collection.watch([{ $match: match }]) as unknown as ChangeStream<
    Stored,
    ChangeStreamInsertDocument<Stored>
  >
  let closed = false
  const close = async () => {
    closed = true
    await stream.close().catch(() => undefined)
  }
  try {
    // The stream is open before the catch-up reads, so an event stored meanwhile is in one or the other.
    const first = await stream.tryNext().catch((error: Error) => {
      throw unavailable(
        `stored events cannot be followed: the database refused a change stream (${error.message}); MongoDB must run as a replica set`,
      )
    })
    const caughtUp = since
      ? await catchUp(collection as unknown as Collection<Stored>, filter, since, query, listener)
      : new Set()
    if (first && !caughtUp.has(first.fullDocument.uuid)) listener.event(storedEvent(first.fullDocument))
    void (async () => {
      for await (const change of stream) {
        if (closed) return
        if (!caughtUp.has(change.fullDocument.uuid)) listener.event(storedEvent(change.fullDocument))
      }
    })().catch((error: Error) => {
      if (!closed) listener.error(error)
    })
  } catch (error) {
    await close()
    throw error
  }
  return { close }
}

/** Sends the events stored after `since` (the newest `catchUpLimit` of them, oldest first); returns their uuids. */
async function catchUp(
  collection: Collection<Stored>,
  filter: Filter<Stored>,
  since: ObjectId,
  query: EventsFollowQuery,
  listener: EventsListener,
): Promise<Set<string>> {
  const limit = query.catchUpLimit ?? DEFAULT_CATCH_UP
  const newer = { ...filter, _id: { $gt: since } }
  const docs = await collection.find(newer).sort({ _id: -1 }).limit(limit).toArray()
  if (docs.length === limit) {
    const total = await collection.countDocuments(newer)
    if (total > limit) listener.missed?.(total - limit)
  }
  docs.reverse()
  for (const doc of docs) listener.event(storedEvent(doc as Stored))
  return new Set(docs.map((doc) => doc.uuid))
}
