/**
 * A fresh database with the decide plugin's, the persons plugin's and the core's (groups among them)
 * indexes, per test file, and the persons service the persons plugin would give decide over it.
 */
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import type { PersonsService } from '../../../../core/plugin-api.ts'
import { testDbName, testMongoUrl } from '../../../helpers/mongo.ts'
import { ensureDecideIndexes } from '../../../../plugins/decide/store/documents.ts'
import { ensurePersonIndexes } from '../../../../plugins/persons/person-store.ts'
import { PersonsReader } from '../../../../plugins/persons/persons-reader.ts'
import { ensureCoreIndexes } from '../../../../core/model/collections.ts'
import { batching } from '../../../../core/model/batching.ts'

export interface TestDb {
  client: MongoClient
  db: Db
  persons: PersonsService
  close(): Promise<void>
}

export async function openTestDb(prefix: string): Promise<TestDb> {
  const client = await new MongoClient(await testMongoUrl()).connect()
  const db = client.db(testDbName(prefix))
  await Promise.all([ensureDecideIndexes(db), ensurePersonIndexes(db), ensureCoreIndexes(db)])
  return {
    client,
    db,
    persons: new PersonsReader(db, batching),
    close: async () => {
      await db.dropDatabase().catch(() => undefined)
      await client.close()
    },
  }
}

export { insertPerson } from '../../persons/fixtures.ts'
