/**
 * The person of a distinct id for flags requests, with the reads of concurrent requests coalesced
 * into one `$in` find per collection and event-loop turn (core/model/coalesce.ts). Under load each flags
 * request otherwise makes two sequential round trips (mapping, then person), and they queue.
 * A read joins a batch that is sent after it was made, so it sees every write completed before
 * the call: a `$set` captured a moment ago still decides the next flags call.
 *
 * The mapping (distinct id → person id) is remembered, and the person is always read fresh, which
 * keeps that guarantee (alias-resolve/remembered-person-ids.ts, as capture does).
 */
import type { Db } from 'mongodb'
import { findAll } from '../../../core/model/find-all.ts'
import { Coalescer, byProject } from '../../../core/model/coalesce.ts'
import { RememberedPersonIds } from '../../alias-resolve/remembered-person-ids.ts'
import { PERSON_COLLECTIONS } from '../../alias-resolve/person-store.ts'
import type { DistinctIdDocument, PersonDocument } from '../../alias-resolve/person-store.ts'

interface Key {
  projectId: number
  value: string
}

/** What flags read of a person (the projection of the find). */
export type FlagsPerson = Pick<PersonDocument, 'id' | 'properties' | 'created_at'>

const keyId = (key: Key) => `${key.projectId}\u0000${key.value}`

export class PersonReader {
  private readonly mappings: Coalescer<Key, string>
  private readonly persons: Coalescer<Key, FlagsPerson>
  private readonly personIds = new RememberedPersonIds()

  constructor(db: Db) {
    const distinctIds = db.collection<DistinctIdDocument>(PERSON_COLLECTIONS.distinctIds)
    const persons = db.collection<PersonDocument>(PERSON_COLLECTIONS.persons)
    this.mappings = new Coalescer(keyId, async (keys) => {
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
    })
    this.persons = new Coalescer(keyId, async (keys) => {
      const found = new Map<string, FlagsPerson>()
      for (const [projectId, group] of byProject(keys)) {
        const filter = { project_id: projectId, id: { $in: group.map((k) => k.value) } }
        const rows = await findAll<PersonDocument, FlagsPerson>(
          persons,
          filter,
          { _id: 0, id: 1, properties: 1, created_at: 1 },
          group.length,
        )
        for (const row of rows) found.set(keyId({ projectId, value: row.id }), row)
      }
      return found
    })
  }

  byDistinctId(projectId: number, distinctId: string): Promise<FlagsPerson | null> {
    return this.personIds.find(this, projectId, distinctId)
  }

  findById(projectId: number, id: string): Promise<FlagsPerson | undefined> {
    return this.persons.get({ projectId, value: id })
  }

  async findThroughMapping(projectId: number, distinctId: string): Promise<FlagsPerson | null> {
    const personId = await this.mappings.get({ projectId, value: distinctId })
    if (personId === undefined) return null
    return (await this.persons.get({ projectId, value: personId })) ?? null
  }
}
