/**
 * The conformance suite talks to whatever `testMongoUrl()` gives: the embedded server, or a real
 * MongoDB when MONGODB_URL is set. Every assertion must hold for both.
 */
import { MongoClient, type Db, type Document, type ObjectId } from 'mongodb'
import { testDbName, testMongoUrl } from '../../../../helpers/mongo.ts'

/** Documents of any shape, with the _id types the suite uses. */
export interface Loose extends Document {
  _id?: ObjectId | number | string
}

export interface TestDb {
  readonly db: Db
  readonly client: MongoClient
}

/** A fresh database for the enclosing describe, dropped afterwards. */
export function useTestDb(prefix: string): TestDb {
  let client: MongoClient | undefined
  let db: Db | undefined
  before(async () => {
    client = new MongoClient(await testMongoUrl())
    await client.connect()
    db = client.db(testDbName(prefix))
  })
  after(async () => {
    await db?.dropDatabase()
    await client?.close()
  })
  return {
    get db(): Db {
      if (!db) throw new Error('the test database is not open yet')
      return db
    },
    get client(): MongoClient {
      if (!client) throw new Error('the test client is not open yet')
      return client
    },
  }
}

/** The error a promise rejects with (fails the test if it resolves). */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ code?: number; codeName?: string; message: string; writeErrors?: unknown }> {
  try {
    await promise
  } catch (error) {
    return error as { code?: number; message: string }
  }
  throw new Error('expected the operation to fail, but it succeeded')
}

/** Whether the server under test is a replica set (change streams need one). */
export async function isReplicaSet(db: Db): Promise<boolean> {
  const hello = await db.admin().command({ hello: 1 })
  return typeof hello.setName === 'string'
}
