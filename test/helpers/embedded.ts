/** An embedded MongoDB on the test's own thread, opened for `fn` through the real driver and closed after it. */
import { MongoClient, type Db } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongoOptions } from '../../core/storage/embedded/index.ts'

export async function withEmbeddedDb<T>(options: EmbeddedMongoOptions, fn: (db: Db) => Promise<T>): Promise<T> {
  const server = await startEmbeddedMongo({ runIn: 'current-thread', ...options })
  const client = new MongoClient(server.url)
  try {
    await client.connect()
    return await fn(client.db('app'))
  } finally {
    await client.close()
    await server.close()
  }
}
