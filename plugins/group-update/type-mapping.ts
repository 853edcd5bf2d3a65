/**
 * Group type → index, per project (capture.md §2.9): a new type takes the lowest free index 0–4 on
 * first sight. Two unique indexes make the assignment safe across processes: an insert that loses
 * a race fails with a duplicate key, and the loser re-reads and either finds its type or tries the
 * next free index. Mappings are never changed once written, so found ones are cached for good.
 */
import type { Db } from 'mongodb'
import { GROUP_COLLECTIONS, contentionError, isDuplicateKey } from '../../core/plugin-api.ts'
import type { GroupTypeMappingDocument } from '../../core/plugin-api.ts'
import { MAX_GROUP_TYPES } from './rules.ts'

/** Each failed insert means another writer took a type or an index, so this many always suffices. */
const MAX_ATTEMPTS = MAX_GROUP_TYPES + 2
const MAX_CACHED_PROJECTS = 10_000

export type TypeIndex = number | 'limit_reached'

export class GroupTypeMappings {
  private readonly cache = new Map<number, Map<string, number>>()

  constructor(private readonly db: Db) {}

  private get collection() {
    return this.db.collection<GroupTypeMappingDocument>(GROUP_COLLECTIONS.groupTypeMappings)
  }

  /** The index of `groupType` in the project, assigning the next free one on first sight. */
  async indexOf(projectId: number, groupType: string, firstSeen: Date): Promise<TypeIndex> {
    const cached = this.cache.get(projectId)
    const hit = cached?.get(groupType)
    if (hit !== undefined) return hit
    if (cached && cached.size >= MAX_GROUP_TYPES) return 'limit_reached'
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const known = await this.load(projectId)
      const index = known.get(groupType)
      if (index !== undefined) return index
      if (known.size >= MAX_GROUP_TYPES) return 'limit_reached'
      const used = new Set(known.values())
      let free = 0
      while (used.has(free)) free++
      try {
        await this.collection.insertOne({
          project_id: projectId,
          group_type: groupType,
          group_type_index: free,
          created_at: firstSeen,
        })
        known.set(groupType, free)
        return free
      } catch (error) {
        if (!isDuplicateKey(error)) throw error
      }
    }
    throw contentionError(`assigning an index to group type "${groupType}"`)
  }

  /** Every mapping of the project, read from the database (and cached). */
  async load(projectId: number): Promise<Map<string, number>> {
    const docs = await this.collection
      .find({ project_id: projectId }, { projection: { _id: 0, group_type: 1, group_type_index: 1 } })
      .toArray()
    const known = new Map(docs.map((doc) => [doc.group_type, doc.group_type_index]))
    if (this.cache.size >= MAX_CACHED_PROJECTS) this.cache.clear()
    this.cache.set(projectId, known)
    return known
  }
}
