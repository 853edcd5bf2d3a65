/**
 * Replaces a project's flag definitions as one unit (see generations.ts for why this is atomic
 * without transactions). Group types are not replaced: group-update assigns them from events and
 * never changes one, so each imported type is matched by name to the project's index, or added
 * (at the source's index when free), and the imported flags' indexes are translated to ours.
 * Added group types survive a failed replacement; they are facts about the project, not flags.
 */
import type { Db } from 'mongodb'
import { GROUP_COLLECTIONS, contentionError, httpError, isDuplicateKey } from '../../../core/plugin-api.ts'
import type { GroupTypeMappingDocument } from '../../../core/plugin-api.ts'
import { remapGroupTypeIndexes } from '../definitions/import.ts'
import type { ImportedDefinitions } from '../definitions/import.ts'
import { DECIDE_COLLECTIONS } from './documents.ts'
import type { CohortDocument, CohortMemberDocument, FlagDocument } from './documents.ts'
import { Generations } from './generations.ts'

const MAX_GROUP_TYPES = 5

/** Source index → this project's index, adding the types the project does not have yet. */
export async function ensureGroupTypes(
  db: Db,
  projectId: number,
  mapping: Record<string, string>,
): Promise<Map<number, number>> {
  const collection = db.collection<GroupTypeMappingDocument>(GROUP_COLLECTIONS.groupTypeMappings)
  const load = async () =>
    new Map(
      (await collection.find({ project_id: projectId }).toArray()).map((doc) => [doc.group_type, doc.group_type_index]),
    )
  let known = await load()
  const translation = new Map<number, number>()
  const entries = Object.entries(mapping).sort(([a], [b]) => Number(a) - Number(b))
  for (const [source, name] of entries) {
    for (let attempt = 0; attempt <= MAX_GROUP_TYPES + 1 && !translation.has(Number(source)); attempt++) {
      const existing = known.get(name)
      if (existing !== undefined) {
        translation.set(Number(source), existing)
        break
      }
      const used = new Set(known.values())
      const free = [Number(source), 0, 1, 2, 3, 4].find((index) => !used.has(index))
      if (free === undefined)
        throw httpError(
          'invalid_input',
          `group_type_mapping.${source}: the project already has ${MAX_GROUP_TYPES} group types, none is ${name}`,
          `group_type_mapping.${source}`,
        )
      try {
        await collection.insertOne({
          project_id: projectId,
          group_type: name,
          group_type_index: free,
          created_at: new Date(),
        })
        known.set(name, free)
      } catch (error) {
        if (!isDuplicateKey(error)) throw error
        known = await load() // another writer took the type or the index first
      }
    }
    if (!translation.has(Number(source))) throw contentionError(`adding group type ${name}`)
  }
  return translation
}

const isIdentity = (translation: Map<number, number>) => [...translation].every(([from, to]) => from === to)

export async function replaceDefinitions(db: Db, projectId: number, imported: ImportedDefinitions): Promise<void> {
  const translation = await ensureGroupTypes(db, projectId, imported.groupTypeMapping)
  const generations = new Generations(db)
  const generation = await generations.reserve(projectId)
  const now = new Date()
  const stamp = { project_id: projectId, generation, created_at: now, updated_at: now }
  const flags: FlagDocument[] = imported.flags.map((flag) => ({
    ...stamp,
    ...flag,
    filters: isIdentity(translation) ? flag.filters : remapGroupTypeIndexes(flag.filters, translation),
  }))
  const cohorts: CohortDocument[] = imported.cohorts.map((cohort) => ({ ...stamp, ...cohort }))
  try {
    if (flags.length > 0)
      await db.collection<FlagDocument>(DECIDE_COLLECTIONS.flags).insertMany(flags, { ordered: false })
    if (cohorts.length > 0)
      await db.collection<CohortDocument>(DECIDE_COLLECTIONS.cohorts).insertMany(cohorts, { ordered: false })
  } catch (error) {
    await generations.collect(projectId, generation).catch(() => undefined)
    throw error
  }
  if (!(await generations.activate(projectId, generation))) {
    await generations.collect(projectId, generation)
    throw httpError(
      'conflict',
      'a later replacement of the flag definitions was applied while this one was written; nothing was changed by this one',
    )
  }
  await generations.collect(projectId)
  // membership of static cohorts that no longer exist would come back with a later cohort of that id
  const staticIds = cohorts.filter((cohort) => cohort.is_static && !cohort.deleted).map((cohort) => cohort.id)
  await db
    .collection<CohortMemberDocument>(DECIDE_COLLECTIONS.cohortMembers)
    .deleteMany({ project_id: projectId, cohort_id: { $nin: staticIds } })
}
