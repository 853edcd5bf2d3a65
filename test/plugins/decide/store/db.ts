/** A fresh database with the decide plugin's, the person plugins' and the core's (groups among them) indexes, per test file. */
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import { testDbName, testMongoUrl } from '../../../helpers/mongo.ts'
import { ensureDecideIndexes } from '../../../../plugins/decide/store/documents.ts'
import { ensurePersonIndexes } from '../../../../plugins/alias-resolve/person-store.ts'
import { ensureCoreIndexes } from '../../../../core/model/collections.ts'

export interface TestDb {
  client: MongoClient
  db: Db
  close(): Promise<void>
}

export async function openTestDb(prefix: string): Promise<TestDb> {
  const client = await new MongoClient(await testMongoUrl()).connect()
  const db = client.db(testDbName(prefix))
  await Promise.all([ensureDecideIndexes(db), ensurePersonIndexes(db), ensureCoreIndexes(db)])
  return {
    client,
    db,
    close: async () => {
      await db.dropDatabase().catch(() => undefined)
      await client.close()
    },
  }
}

/** A person with these distinct ids, written in alias-resolve's shape. */
export async function insertPerson(
  db: Db,
  projectId: number,
  personId: string,
  distinctIds: string[],
  properties: Record<string, unknown> = {},
): Promise<void> {
  await db.collection('persons').insertOne({
    project_id: projectId,
    id: personId,
    properties,
    is_identified: false,
    created_at: new Date('2026-01-02T03:04:05Z'),
    version: 0,
  })
  await db
    .collection('person_distinct_ids')
    .insertMany(
      distinctIds.map((distinct_id) => ({ project_id: projectId, distinct_id, person_id: personId, version: 0 })),
    )
}
