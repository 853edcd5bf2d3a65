import type { Collection, Document, IndexDescription } from 'mongodb'
import type { Logger } from 'pino'

export const RETENTION_INDEX = 'retention_ttl'

/** The TTL index that deletes events `retentionDays` after they were received. */
export function retentionIndex(retentionDays: number): IndexDescription & { name: string; expireAfterSeconds: number } {
  return { key: { created_at: 1 }, name: RETENTION_INDEX, expireAfterSeconds: Math.round(retentionDays * 86_400) }
}

/**
 * Applies `retentionDays` after setup, not within it: the first time it is set on a collection that
 * already holds millions of events, building the index takes minutes (on MongoDB as on the embedded
 * server, which both keep answering meanwhile), and the service must not fail its start over it.
 * Events are kept until the index is ready. A changed `retentionDays` changes the index's
 * expireAfterSeconds (collMod), where createIndexes would refuse the different options. Resolves
 * once applied; a failure is logged, never thrown (the service runs on, keeping its events).
 */
export async function applyRetention<T extends Document>(
  collection: Collection<T>,
  retentionDays: number,
  logger: Logger,
  closing: () => boolean,
): Promise<void> {
  const index = retentionIndex(retentionDays)
  try {
    const existing = (await collection.listIndexes().toArray()).find((ix) => ix.name === RETENTION_INDEX)
    if (existing && existing.expireAfterSeconds !== index.expireAfterSeconds) {
      await collection.db.command({
        collMod: collection.collectionName,
        index: { name: RETENTION_INDEX, expireAfterSeconds: index.expireAfterSeconds },
      })
      logger.info(
        { from: existing.expireAfterSeconds, to: index.expireAfterSeconds },
        `retention changed to ${retentionDays} days (TTL index ${RETENTION_INDEX})`,
      )
      return
    }
    const events = existing ? 0 : await collection.estimatedDocumentCount()
    const started = performance.now()
    if (!existing)
      logger.info(
        { events },
        `building the retention index (${RETENTION_INDEX}) over ${events} events in the background: events older than ${retentionDays} days are deleted once it is ready`,
      )
    // an index already listed may still be building (resumed after a restart): this waits for it
    await collection.createIndexes([index])
    if (!existing)
      logger.info(
        { events, seconds: Math.round((performance.now() - started) / 100) / 10 },
        `retention index ${RETENTION_INDEX} ready: events older than ${retentionDays} days are now deleted`,
      )
  } catch (error) {
    if (closing()) return
    logger.error({ err: error }, `could not apply retentionDays (${retentionDays}): events are kept`)
  }
}
