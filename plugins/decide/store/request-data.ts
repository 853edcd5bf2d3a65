/**
 * What one flags request reads from the database, at request time (a `$set` captured a moment ago
 * is visible to the next call): the person of the distinct id, the stored rows of the groups the
 * flags read, and the person's static cohorts. Written by alias-resolve / person-update
 * (`persons`, `person_distinct_ids`), read here directly, and group-update (`groups`), read
 * through the core's `groups` service.
 */
import type { Db } from 'mongodb'
import type { GroupsReader } from '../../../core/plugin-api.ts'
import type { DatabaseState, Properties } from '../evaluator/index.ts'
import { getDistinctIdsOfPerson } from '../../alias-resolve/person-store.ts'
import { PersonReader } from './person-reader.ts'
import { DECIDE_COLLECTIONS } from './documents.ts'
import type { CohortMemberDocument } from './documents.ts'

export interface RequestDataQuery {
  projectId: number
  distinctId: string
  /** The request's groups: type name → key. */
  groups: Record<string, unknown> | null
  groupTypeIndexes: number[]
  groupTypeMapping: Readonly<Record<string, string>>
  readStaticMembership: boolean
}

/** A usable group key as group-update stores it: non-empty strings as they are, numbers as text. */
function storedGroupKey(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw === '' ? undefined : raw
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw)
  return undefined
}

/** The stored properties of each requested group the flags read, by group type index. */
async function groupProperties(reader: GroupsReader, query: RequestDataQuery): Promise<Record<number, Properties>> {
  const found: Record<number, Properties> = {}
  const reads = query.groupTypeIndexes.map(async (index) => {
    const name = query.groupTypeMapping[String(index)]
    const key = name === undefined ? undefined : storedGroupKey(query.groups?.[name])
    if (key === undefined) return
    const properties = await reader.properties(query.projectId, index, key)
    if (properties !== undefined) found[index] = properties
  })
  await Promise.all(reads)
  return found
}

/** Static cohorts holding any distinct id of the person (membership is recorded by distinct id). */
async function staticCohortIds(db: Db, projectId: number, personId: string): Promise<number[]> {
  const distinctIds = await getDistinctIdsOfPerson(db, projectId, personId)
  const rows = await db
    .collection<CohortMemberDocument>(DECIDE_COLLECTIONS.cohortMembers)
    .find({ project_id: projectId, distinct_id: { $in: distinctIds } }, { projection: { _id: 0, cohort_id: 1 } })
    .toArray()
  return [...new Set(rows.map((row) => row.cohort_id))]
}

const readers = new WeakMap<Db, PersonReader>()

/** One coalescing person reader per database, so that all requests share its batches. */
function personReaderFor(db: Db): PersonReader {
  let found = readers.get(db)
  if (!found) readers.set(db, (found = new PersonReader(db)))
  return found
}

/** The `loaded` database state for the evaluator; throws when the database cannot be read. */
export async function loadRequestData(
  db: Db,
  query: RequestDataQuery,
  groupReader: GroupsReader,
): Promise<DatabaseState> {
  const [person, groups] = await Promise.all([
    personReaderFor(db).byDistinctId(query.projectId, query.distinctId),
    groupProperties(groupReader, query),
  ])
  const cohorts = person && query.readStaticMembership ? await staticCohortIds(db, query.projectId, person.id) : []
  return {
    status: 'loaded',
    person: person
      ? { properties: person.properties ?? {}, created_at: new Date(person.created_at).toISOString() }
      : null,
    groupProperties: groups,
    staticCohortIds: cohorts,
  }
}
