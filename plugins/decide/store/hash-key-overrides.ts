/**
 * Experience continuity (flags.md §4.3): a person keeps the bucket it had as an anonymous visitor.
 * When a request carries `$anon_distinct_id`, the persons of both ids get, for each continuity
 * flag they have no override for yet, the anon id as hash key; reads then return the overrides of
 * the persons of the given ids, the first id's person winning. Overrides belong to persons: an id
 * without a person has none, and the evaluator then hashes the request's anon id itself.
 */
import { MongoBulkWriteError } from 'mongodb'
import type { Db } from 'mongodb'
import { isDuplicateKey, type PersonsService } from '../../../core/plugin-api.ts'
import { DECIDE_COLLECTIONS } from './documents.ts'
import type { HashKeyOverrideDocument } from './documents.ts'

export interface OverrideWrite {
  hashKey: string
  distinctIds: string[]
  flagKeys: string[]
}

/** Persons come from the contract's `persons` service; overrides are decide's own collection. */
export interface OverrideStores {
  readonly db: Db
  readonly persons: PersonsService
}

export async function writeHashKeyOverrides(
  { db, persons }: OverrideStores,
  projectId: number,
  write: OverrideWrite,
): Promise<void> {
  if (write.flagKeys.length === 0) return
  const personIds = await persons.personIdsOf(projectId, write.distinctIds)
  if (personIds.length === 0) return
  const collection = db.collection<HashKeyOverrideDocument>(DECIDE_COLLECTIONS.hashKeyOverrides)
  const existing = await collection
    .find(
      { project_id: projectId, person_id: { $in: personIds }, feature_flag_key: { $in: write.flagKeys } },
      { projection: { _id: 0, person_id: 1, feature_flag_key: 1 } },
    )
    .toArray()
  const have = new Set(existing.map((row) => `${row.person_id}\u0000${row.feature_flag_key}`))
  const missing = personIds.flatMap((personId) =>
    write.flagKeys
      .filter((key) => !have.has(`${personId}\u0000${key}`))
      .map((key) => ({ project_id: projectId, person_id: personId, feature_flag_key: key, hash_key: write.hashKey })),
  )
  if (missing.length === 0) return
  try {
    await collection.insertMany(missing, { ordered: false })
  } catch (error) {
    // a concurrent request wrote the same override first: the first one written is kept
    const onlyDuplicates =
      error instanceof MongoBulkWriteError && [error.writeErrors].flat().every((e) => isDuplicateKey(e))
    if (!onlyDuplicates) throw error
  }
}

/** Flag key → hash key for the persons of `distinctIds`; the first id's person has priority. */
export async function readHashKeyOverrides(
  { db, persons }: OverrideStores,
  projectId: number,
  distinctIds: string[],
): Promise<Record<string, string>> {
  const personIds = await persons.personIdsOf(projectId, distinctIds)
  if (personIds.length === 0) return {}
  const rows = await db
    .collection<HashKeyOverrideDocument>(DECIDE_COLLECTIONS.hashKeyOverrides)
    .find(
      { project_id: projectId, person_id: { $in: personIds } },
      { projection: { _id: 0, person_id: 1, feature_flag_key: 1, hash_key: 1 } },
    )
    .toArray()
  const priority = new Map(personIds.map((id, index) => [id, index]))
  rows.sort((a, b) => (priority.get(b.person_id) ?? 0) - (priority.get(a.person_id) ?? 0))
  // keyed by flag keys, which may be any string (`constructor`, `__proto__`): no prototype
  const overrides: Record<string, string> = Object.create(null)
  for (const row of rows) overrides[row.feature_flag_key] = row.hash_key
  return overrides
}
