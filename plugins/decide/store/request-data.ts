/**
 * What one flags request reads from the database, at request time (a `$set` captured a moment ago
 * is visible to the next call): the person of the distinct id, the stored rows of the groups the
 * flags read, and the person's static cohorts. Persons are read through the contract's `persons`
 * service (without one, no request has a stored person), groups through the core's `groups`
 * service.
 */
import type { Db } from 'mongodb'
import type { GroupsReader, PersonsService } from '../../../core/plugin-api.ts'
import type { DatabaseState, Properties } from '../evaluator/index.ts'
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
async function staticCohortIds(
  db: Db,
  persons: PersonsService,
  projectId: number,
  personId: string,
): Promise<number[]> {
  const distinctIds = await persons.distinctIdsOf(projectId, personId)
  const rows = await db
    .collection<CohortMemberDocument>(DECIDE_COLLECTIONS.cohortMembers)
    .find({ project_id: projectId, distinct_id: { $in: distinctIds } }, { projection: { _id: 0, cohort_id: 1 } })
    .toArray()
  return [...new Set(rows.map((row) => row.cohort_id))]
}

/** The `loaded` database state for the evaluator; throws when the database cannot be read. */
export async function loadRequestData(
  db: Db,
  persons: PersonsService | undefined,
  query: RequestDataQuery,
  groupReader: GroupsReader,
): Promise<DatabaseState> {
  const [person, groups] = await Promise.all([
    persons ? persons.byDistinctId(query.projectId, query.distinctId) : null,
    groupProperties(groupReader, query),
  ])
  const cohorts =
    persons && person && query.readStaticMembership
      ? await staticCohortIds(db, persons, query.projectId, person.id)
      : []
  return {
    status: 'loaded',
    // the evaluator only reads properties; concurrent requests may share one read person
    person: person ? { properties: person.properties as Properties, created_at: person.createdAt.toISOString() } : null,
    groupProperties: groups,
    staticCohortIds: cohorts,
  }
}
