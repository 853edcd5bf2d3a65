/**
 * The person of a distinct id for flags requests, with the reads of concurrent requests coalesced
 * into one `$in` find per collection and event-loop turn (core/coalesce.ts). Under load each flags
 * request otherwise makes two sequential round trips (mapping, then person), and they queue.
 * A read joins a batch that is sent after it was made, so it sees every write completed before
 * the call: a `$set` captured a moment ago still decides the next flags call.
 *
 * The mapping (distinct id → person id) is remembered, and the person is always read fresh. That
 * keeps the guarantee because a distinct id only ever leaves a person that is deleted in the same
 * operation: a merge moves the ids of the merged-away person to the survivor, then deletes it
 * (alias-resolve/merge.ts), and nothing else re-points an id. So a remembered person that still
 * exists is the id's person; one that is gone sends the read back to the mapping. A distinct id
 * without a person is not remembered (a person may be created for it at any moment).
 */
import type { Db } from 'mongodb'
import { findAll } from '../../../core/storage/find-all.ts'
import { Coalescer, byProject } from '../../../core/coalesce.ts'
import { ProjectKeyed } from '../../alias-resolve/project-keyed.ts'
import { PERSON_COLLECTIONS } from '../../alias-resolve/person-store.ts'
import type { DistinctIdDocument, PersonDocument } from '../../alias-resolve/person-store.ts'

interface Key {
  projectId: number
  value: string
}

/** What flags read of a person (the projection of the find). */
export type FlagsPerson = Pick<PersonDocument, 'id' | 'properties' | 'created_at'>

const keyId = (key: Key) => `${key.projectId}\u0000${key.value}`

/** Distinct ids whose person id is remembered (ids and uuids of ~40 bytes: a few MB at most). */
const MAPPING_CACHE_SIZE = 50_000

export class PersonReader {
  private readonly mappings: Coalescer<Key, string>
  private readonly persons: Coalescer<Key, FlagsPerson>
  private readonly personIds = new ProjectKeyed<string>(MAPPING_CACHE_SIZE)

  constructor(db: Db) {
    const distinctIds = db.collection<DistinctIdDocument>(PERSON_COLLECTIONS.distinctIds)
    const persons = db.collection<PersonDocument>(PERSON_COLLECTIONS.persons)
    this.mappings = new Coalescer(keyId, async (keys) => {
      const found = new Map<string, string>()
      for (const [projectId, group] of byProject(keys)) {
        const filter = { project_id: projectId, distinct_id: { $in: group.map((k) => k.value) } }
        const rows = await findAll<DistinctIdDocument, Pick<DistinctIdDocument, 'distinct_id' | 'person_id'>>(distinctIds, filter, { _id: 0, distinct_id: 1, person_id: 1 }, group.length)
        for (const row of rows) found.set(keyId({ projectId, value: row.distinct_id }), row.person_id)
      }
      return found
    })
    this.persons = new Coalescer(keyId, async (keys) => {
      const found = new Map<string, FlagsPerson>()
      for (const [projectId, group] of byProject(keys)) {
        const filter = { project_id: projectId, id: { $in: group.map((k) => k.value) } }
        const rows = await findAll<PersonDocument, FlagsPerson>(persons, filter, { _id: 0, id: 1, properties: 1, created_at: 1 }, group.length)
        for (const row of rows) found.set(keyId({ projectId, value: row.id }), row)
      }
      return found
    })
  }

  async byDistinctId(projectId: number, distinctId: string): Promise<FlagsPerson | null> {
    const remembered = this.personIds.get(projectId, distinctId)
    if (remembered !== undefined) {
      const person = await this.persons.get({ projectId, value: remembered })
      if (person) return person
      this.personIds.delete(projectId, distinctId)
    }
    const personId = await this.mappings.get({ projectId, value: distinctId })
    if (personId === undefined) return null
    const person = await this.persons.get({ projectId, value: personId })
    if (person) this.personIds.set(projectId, distinctId, personId)
    return person ?? null
  }
}
