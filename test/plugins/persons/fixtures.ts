/** A real test database with the person indexes, and events and contexts for the person steps. */
import { MongoClient } from 'mongodb'
import type { CommandStartedEvent, Db } from 'mongodb'
import { monitoredClient, testDbName, testMongoUrl } from '../../helpers/mongo.ts'
import { PersonStore, ensurePersonIndexes } from '../../../plugins/persons/person-store.ts'
import type { EventContext, IngestEvent } from '../../../core/plugin-api.ts'
import { sampleContext } from '../../helpers/hooks.ts'
import { batching } from '../../../core/model/batching.ts'

export interface PersonDb {
  readonly db: Db
  /** A fresh store, as another process would have (no shared memory). */
  store(): PersonStore
  close(): Promise<void>
}

export async function openPersonDb(name: string): Promise<PersonDb> {
  const client = new MongoClient(await testMongoUrl())
  await client.connect()
  const db = client.db(testDbName(name))
  await ensurePersonIndexes(db)
  return {
    db,
    store: () => new PersonStore(db, batching),
    close: async () => {
      await db.dropDatabase().catch(() => undefined)
      await client.close()
    },
  }
}

/** A person database whose client lists the collection of every `find` it sends, in `finds`. */
export type CountedPersonDb = PersonDb & { readonly finds: string[] }

export async function openCountedPersonDb(name: string): Promise<CountedPersonDb> {
  const finds: string[] = []
  const client = await monitoredClient(
    (event: CommandStartedEvent) => event.commandName === 'find' && finds.push(String(event.command.find)),
  )
  const db = client.db(testDbName(name))
  await ensurePersonIndexes(db)
  return {
    db,
    finds,
    store: () => new PersonStore(db, batching),
    close: async () => {
      await db.dropDatabase().catch(() => undefined)
      await client.close()
    },
  }
}

let projectCounter = 0
/** Each test takes its own project id, so tests in one database never see each other's persons. */
export const nextProjectId = () => 1000 + ++projectCounter

export const personEvent = (over: Partial<IngestEvent> = {}): IngestEvent => ({
  uuid: '01900000-0000-7000-8000-000000000001',
  event: '$pageview',
  distinctId: 'user',
  properties: {},
  timestamp: new Date('2026-03-01T12:00:00Z'),
  ...over,
})

export function contextFor(
  projectId: number,
): EventContext & { warnings: Array<{ type: string; details?: Record<string, unknown> }> } {
  const warnings: Array<{ type: string; details?: Record<string, unknown> }> = []
  const base = sampleContext()
  return {
    ...base,
    project: { ...base.project, id: projectId },
    warn: (type, details) => void warnings.push({ type, details }),
    warnings,
  }
}

/** JSON view of a property object (null-prototype objects compare as plain ones). */
export const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>

/** A person with these distinct ids, written as the persons plugin stores it. */
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
