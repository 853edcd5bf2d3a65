/**
 * The `persons` service of the contract (PersonsService): how other plugins (decide's flags) read
 * persons. Lookups by distinct id of concurrent requests are coalesced into one `$in` find per
 * collection (the contract's `api.batching`), and a lookup made within READ_SPACING_MS after a
 * find of one key waits for the next find, so that requests arriving one by one share them too: under load each flags request otherwise makes
 * two sequential round trips (mapping, then person), and they queue. A read joins a batch that is
 * sent after it was made, so it sees every write completed before the call: a `$set` captured a
 * moment ago still decides the next flags call.
 *
 * The mapping (distinct id → person id) is remembered (remembered-person-ids.ts, as capture does),
 * and the person is read fresh unless a cache is given: then it is kept while a change stream says
 * it has not changed (the contract's WatchedCache; index.ts evicts this process's writes).
 */
import type { Db } from 'mongodb'
import type {
  Batching,
  CachedRead,
  Coalescer,
  PersonsService,
  StoredPerson,
  WatchedCache,
} from '../../core/plugin-api.ts'
import { RememberedPersonIds } from './remembered-person-ids.ts'
import { PERSON_COLLECTIONS, getDistinctIdsOfPerson } from './person-store.ts'
import type { DistinctIdDocument, PersonDocument } from './person-store.ts'

interface Key {
  projectId: number
  value: string
}

/** What is read of a person (the projection of the find). */
type PersonRow = Pick<PersonDocument, 'id' | 'properties' | 'created_at'> & { _id: unknown }
type ReadPerson = CachedRead<StoredPerson>

/**
 * How long after a find of one key the next waits (CoalescerOptions.spacingMs): a find costs the service
 * 100-200 µs of CPU whatever its number of keys, and page loads arrive one by one. 1 ms is the
 * timers' resolution, so the smallest wait there is (docs/performance.md).
 */
const READ_SPACING_MS = 1

const keyId = (key: Key) => `${key.projectId}\u0000${key.value}`
/** The key of a person in the cache (index.ts evicts a person this process wrote by it). */
export const personKey = (projectId: number, id: string) => keyId({ projectId, value: id })

const read = (row: PersonRow): ReadPerson => ({
  value: { id: row.id, properties: row.properties ?? {}, createdAt: new Date(row.created_at) },
  documentId: row._id,
})

export class PersonsReader implements PersonsService {
  private readonly mappings: Coalescer<Key, string>
  private readonly persons: Coalescer<Key, ReadPerson>
  private readonly personIds = new RememberedPersonIds()
  private readonly cache: WatchedCache<StoredPerson> | undefined

  /**
   * `spacingMs`: how far apart this reader's finds start (CoalescerOptions.spacingMs); `cache`:
   * keeps the persons read (none: every read goes to the database).
   */
  constructor(
    private readonly db: Db,
    { coalescer, byProject, findAll }: Batching,
    { spacingMs = READ_SPACING_MS, cache }: { spacingMs?: number; cache?: WatchedCache<StoredPerson> } = {},
  ) {
    this.cache = cache
    const distinctIds = db.collection<DistinctIdDocument>(PERSON_COLLECTIONS.distinctIds)
    const persons = db.collection<PersonDocument>(PERSON_COLLECTIONS.persons)
    this.mappings = coalescer(
      keyId,
      async (keys) => {
        const found = new Map<string, string>()
        for (const [projectId, group] of byProject(keys)) {
          const filter = { project_id: projectId, distinct_id: { $in: group.map((k) => k.value) } }
          const rows = await findAll<DistinctIdDocument, Pick<DistinctIdDocument, 'distinct_id' | 'person_id'>>(
            distinctIds,
            filter,
            { _id: 0, distinct_id: 1, person_id: 1 },
            group.length,
          )
          for (const row of rows) found.set(keyId({ projectId, value: row.distinct_id }), row.person_id)
        }
        return found
      },
      { spacingMs },
    )
    this.persons = coalescer(
      keyId,
      async (keys) => {
        const found = new Map<string, ReadPerson>()
        for (const [projectId, group] of byProject(keys)) {
          const filter = { project_id: projectId, id: { $in: group.map((k) => k.value) } }
          const rows = await findAll<PersonDocument, PersonRow>(
            persons,
            filter,
            { _id: 1, id: 1, properties: 1, created_at: 1 },
            group.length,
          )
          for (const row of rows) found.set(keyId({ projectId, value: row.id }), read(row))
        }
        return found
      },
      { spacingMs },
    )
  }

  byDistinctId(projectId: number, distinctId: string): Promise<StoredPerson | null> {
    return this.personIds.find(this, projectId, distinctId)
  }

  /** One of the two reads `byDistinctId` is made of (remembered-person-ids.ts). */
  async findById(projectId: number, id: string): Promise<StoredPerson | undefined> {
    const load = () => this.persons.get({ projectId, value: id })
    if (this.cache) return this.cache.read(personKey(projectId, id), load)
    return (await load())?.value
  }

  /** The other one. */
  async findThroughMapping(projectId: number, distinctId: string): Promise<StoredPerson | null> {
    const personId = await this.mappings.get({ projectId, value: distinctId })
    if (personId === undefined) return null
    return (await this.findById(projectId, personId)) ?? null
  }

  async personIdsOf(projectId: number, distinctIds: readonly string[]): Promise<string[]> {
    const rows = await this.db
      .collection<DistinctIdDocument>(PERSON_COLLECTIONS.distinctIds)
      .find(
        { project_id: projectId, distinct_id: { $in: [...distinctIds] } },
        { projection: { _id: 0, distinct_id: 1, person_id: 1 } },
      )
      .toArray()
    const byDistinctId = new Map(rows.map((row) => [row.distinct_id, row.person_id]))
    return [...new Set(distinctIds.map((id) => byDistinctId.get(id)).filter((id): id is string => id !== undefined))]
  }

  distinctIdsOf(projectId: number, personId: string): Promise<string[]> {
    return getDistinctIdsOfPerson(this.db, projectId, personId)
  }
}
