/**
 * Opens the database: the configured MongoDB when `storage.mongodbUrl` is set, otherwise the
 * embedded MongoDB-compatible server under the data folder, reached through the same driver.
 */
import path from 'node:path'
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import type { Logger } from 'pino'
import type { Config } from '../config.ts'
import { startEmbeddedMongo } from './embedded/index.ts'
import type { EmbeddedMongo } from './embedded/index.ts'
import { ensureCoreIndexes } from '../model/collections.ts'

export interface Storage {
  readonly client: MongoClient
  readonly db: Db
  readonly embedded?: EmbeddedMongo
  /** Whether the database answers a ping within a second (readiness). */
  ping(): Promise<boolean>
  close(): Promise<void>
}

/**
 * The service's own embedded store, answering as a one-member replica set (as a production MongoDB
 * must be): change streams, which the console's live events and pushed flag changes need, work on
 * the default install too.
 */
export function startServiceStore(dataDir: string): Promise<EmbeddedMongo> {
  return startEmbeddedMongo({ dataDir, replSetName: 'rs0' })
}

export async function openStorage(config: Config, logger: Logger): Promise<Storage> {
  let embedded: EmbeddedMongo | undefined
  let url = config.storage.mongodbUrl
  if (!url) {
    const dataDir = path.resolve(config.storage.dataDir, 'mongo')
    embedded = await startServiceStore(dataDir)
    url = embedded.url
    logger.warn(
      { dataDir, url },
      'using the embedded single-machine database; set MONGODB_URL (or storage.mongodbUrl) to a MongoDB replica set for production',
    )
  }
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000, connectTimeoutMS: 5_000, appName: 'hedgerow' })
  try {
    await client.connect()
    const db = client.db(config.storage.database)
    await ensureCoreIndexes(db)
    return {
      client,
      db,
      embedded,
      async ping() {
        try {
          await db.command({ ping: 1 }, { timeoutMS: 1_000 })
          return true
        } catch {
          return false
        }
      },
      async close() {
        await client.close()
        await embedded?.close()
      },
    }
  } catch (error) {
    await client.close().catch(() => undefined)
    await embedded?.close()
    throw error
  }
}
