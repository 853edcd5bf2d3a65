/**
 * Writing a group (capture.md §2.9): created with `$group_set` and the event time, or shallow-merged
 * into the stored properties with an optimistic version check, so concurrent writers never lose
 * each other's keys. The whole document is replaced: property names never appear in an update
 * path, and no update operator ever sees them.
 */
import type { Db } from 'mongodb'
import { GROUP_COLLECTIONS, contentionError, isDuplicateKey } from '../../core/plugin-api.ts'
import type { GroupDocument } from '../../core/plugin-api.ts'
import { mergeGroupProperties } from './rules.ts'

const MAX_ATTEMPTS = 20

export interface GroupWrite {
  readonly projectId: number
  readonly groupTypeIndex: number
  readonly groupKey: string
  readonly set: Record<string, unknown>
  readonly timestamp: Date
}

export type GroupWriteResult = 'created' | 'updated' | 'unchanged'

export async function upsertGroup(db: Db, write: GroupWrite): Promise<GroupWriteResult> {
  const groups = db.collection<GroupDocument>(GROUP_COLLECTIONS.groups)
  const identity = { project_id: write.projectId, group_type_index: write.groupTypeIndex, group_key: write.groupKey }
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await groups.findOne(identity)
    if (!stored) {
      try {
        await groups.insertOne({
          ...identity,
          group_properties: { ...write.set },
          created_at: write.timestamp,
          version: 1,
        })
        return 'created'
      } catch (error) {
        if (isDuplicateKey(error)) continue
        throw error
      }
    }
    const merged = mergeGroupProperties(stored.group_properties ?? {}, write.set)
    const createdAt = write.timestamp < stored.created_at ? write.timestamp : stored.created_at
    if (!merged.changed && createdAt === stored.created_at) return 'unchanged'
    const result = await groups.replaceOne(
      { _id: stored._id, version: stored.version },
      { ...identity, group_properties: merged.properties, created_at: createdAt, version: stored.version + 1 },
    )
    if (result.matchedCount === 1) return 'updated'
  }
  throw contentionError(`updating group ${write.groupKey}`)
}
