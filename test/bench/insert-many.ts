/**
 * Figure 1's baseline: the raw mongodb driver storing the very documents the service stored (read
 * back from `events`, given fresh uuids) with `insertMany`, in batches of the same size, at the
 * same concurrency, write concern and indexes as sink-mongo.
 */
import { randomUUID } from 'node:crypto'
import type { Db, Document } from 'mongodb'
import { measureSlice } from './load.ts'
import type { CommandCounter, Target } from './load.ts'

export interface InsertManyOptions {
  concurrency: number
  batchSize: number
  /** The database process, for its CPU use. */
  databasePid?: number
  databaseCommands?: CommandCounter
}

/** The baseline as a bench target: its units are stored events, its target CPU this process's (the driver's). */
export async function insertManyTarget(db: Db, options: InsertManyOptions): Promise<Target> {
  const stored = await db
    .collection('events')
    .find({}, { projection: { _id: 0 } })
    .limit(options.batchSize)
    .toArray()
  if (stored.length < options.batchSize)
    throw new Error(`expected ${options.batchSize} stored events to copy, found ${stored.length}`)
  const target = db.collection('baseline_batch')
  await target.createIndexes([
    { key: { project_id: 1, uuid: 1 }, name: 'project_uuid_unique', unique: true },
    { key: { project_id: 1, timestamp: -1, uuid: -1 }, name: 'project_timestamp' },
    { key: { project_id: 1, distinct_id: 1, timestamp: -1 }, name: 'project_distinct_id_timestamp' },
  ])
  const writeConcern = { w: 'majority' as const, j: true }
  const batch = (): Document[] => stored.map((doc) => ({ ...doc, uuid: randomUUID(), created_at: new Date() }))
  const runFor = async (seconds: number): Promise<{ units: number }> => {
    const until = performance.now() + seconds * 1000
    let inserted = 0
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (performance.now() < until) {
          await target.insertMany(batch(), { ordered: false, writeConcern })
          inserted += options.batchSize
        }
      }),
    )
    return { units: inserted }
  }
  return {
    warmUp: async (seconds = 2) => void (await runFor(seconds)),
    slice: (seconds) =>
      measureSlice({ databasePid: options.databasePid, databaseCommands: options.databaseCommands }, () =>
        runFor(seconds),
      ),
  }
}
