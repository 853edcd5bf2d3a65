/**
 * Figure 1's baseline: the raw mongodb driver storing the very documents the service stored (read
 * back from `events`, given fresh uuids) with `insertMany`, in batches of the same size, at the
 * same concurrency, write concern and indexes as sink-mongo.
 */
import { randomUUID } from 'node:crypto'
import type { Db, Document } from 'mongodb'
import { cpuSeconds } from './processes.ts'

export interface InsertManyOptions {
  seconds: number
  concurrency: number
  batchSize: number
  /** The database process, for its CPU use. */
  databasePid?: number
}

export interface InsertManyResult {
  eventsPerSecond: number
  /** CPU microseconds per stored event: the database's, and this process's (the driver's). */
  databaseCpuUs: number
  driverCpuUs: number
}

export async function insertManyBaseline(db: Db, options: InsertManyOptions): Promise<InsertManyResult> {
  const stored = await db.collection('events').find({}, { projection: { _id: 0 } }).limit(options.batchSize).toArray()
  if (stored.length < options.batchSize) throw new Error(`expected ${options.batchSize} stored events to copy, found ${stored.length}`)
  const target = db.collection('baseline_batch')
  await target.createIndexes([
    { key: { project_id: 1, uuid: 1 }, name: 'project_uuid_unique', unique: true },
    { key: { project_id: 1, timestamp: -1, uuid: -1 }, name: 'project_timestamp' },
    { key: { project_id: 1, distinct_id: 1, timestamp: -1 }, name: 'project_distinct_id_timestamp' },
  ])
  const writeConcern = { w: 'majority' as const, j: true }
  const batch = (): Document[] => stored.map((doc) => ({ ...doc, uuid: randomUUID(), created_at: new Date() }))
  const runFor = async (ms: number): Promise<number> => {
    const until = performance.now() + ms
    let inserted = 0
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (performance.now() < until) {
          await target.insertMany(batch(), { ordered: false, writeConcern })
          inserted += options.batchSize
        }
      }),
    )
    return inserted
  }
  await runFor(Math.min(2, options.seconds) * 1000)
  const started = performance.now()
  const databaseBefore = options.databasePid ? cpuSeconds(options.databasePid) : 0
  const driverBefore = process.cpuUsage()
  const inserted = await runFor(options.seconds * 1000)
  const driver = process.cpuUsage(driverBefore)
  const databaseSeconds = options.databasePid ? cpuSeconds(options.databasePid) - databaseBefore : 0
  return {
    eventsPerSecond: inserted / ((performance.now() - started) / 1000),
    databaseCpuUs: (databaseSeconds * 1e6) / inserted,
    driverCpuUs: (driver.user + driver.system) / inserted,
  }
}
