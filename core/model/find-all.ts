/**
 * The documents of a find, sent as one plain `find` command when its first batch holds them all.
 * The coalesced lookups of capture (persons) and flags (decide) are small `$in` finds, and the
 * driver's cursor machinery around each (session, cursor state, batch buffers) costs the service
 * more CPU than the command itself (docs/performance.md).
 *
 * A result that does not fit the first batch (more documents than `expected`, or over 16 MB) is
 * read again through the driver's cursor after the command's cursor is closed: a `getMore` must run
 * in the session of its `find`, which a plain command does not keep. Reads go to the primary, with
 * the collection's read concern: ingestion and flags must both see the writes made before them.
 */
import { ReadPreference } from 'mongodb'
import type { Collection, Document, Filter } from 'mongodb'

/** Above the most keys a coalesced lookup asks for (coalesce.ts), so one batch answers them all. */
const MAX_FIRST_BATCH = 1_000

interface CursorReply<R> {
  cursor?: { id?: unknown; firstBatch?: R[] }
}

/** A cursor id of 0 (number, bigint or Long) means the server has nothing more. */
const isClosed = (id: unknown) => id === undefined || Number(id) === 0

/** `expected`: how many documents at most (one per `$in` key, say); it sizes the first batch. */
export async function findAll<T extends Document, R = T>(
  collection: Collection<T>,
  filter: Filter<T>,
  projection: Document,
  expected = MAX_FIRST_BATCH - 1,
): Promise<R[]> {
  const readConcern = collection.readConcern?.level ? { readConcern: { level: collection.readConcern.level } } : {}
  const command = { find: collection.collectionName, filter, projection, batchSize: expected + 1, ...readConcern }
  const { cursor } = (await collection.db.command(command, {
    readPreference: ReadPreference.primary,
  })) as CursorReply<R>
  if (cursor && Array.isArray(cursor.firstBatch) && isClosed(cursor.id)) return cursor.firstBatch
  if (cursor && !isClosed(cursor.id))
    await collection.db.command({ killCursors: collection.collectionName, cursors: [cursor.id] }).catch(() => undefined)
  return (await collection
    .find(filter, { projection, readPreference: ReadPreference.primary })
    .toArray()) as unknown as R[]
}
