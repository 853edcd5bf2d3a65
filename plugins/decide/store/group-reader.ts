/**
 * The stored properties of the groups flags requests name, with the reads of concurrent requests
 * coalesced into one find per project and group type and event-loop turn (core/coalesce.ts), as
 * person-reader.ts does for persons: under load every flags request with a group flag would
 * otherwise send its own command. The find is an equality on the whole unique index
 * (`group_key: {$in}`), so it reads one index entry per key. A read joins a batch that is sent
 * after it was made: a group `$set` captured a moment ago decides the next flags call.
 */
import type { Db } from 'mongodb'
import { findAll } from '../../../core/storage/find-all.ts'
import { Coalescer } from '../../../core/coalesce.ts'
import { GROUP_COLLECTIONS } from '../../group-update/documents.ts'
import type { GroupDocument } from '../../group-update/documents.ts'
import type { Properties } from '../evaluator/index.ts'

interface Key {
  projectId: number
  typeIndex: number
  groupKey: string
}

const keyId = (key: Key) => `${key.projectId}\u0000${key.typeIndex}\u0000${key.groupKey}`

export class GroupReader {
  private readonly groups: Coalescer<Key, Properties>

  constructor(db: Db) {
    const collection = db.collection<GroupDocument>(GROUP_COLLECTIONS.groups)
    this.groups = new Coalescer(keyId, async (keys) => {
      const byType = new Map<string, Key[]>()
      for (const key of keys) {
        const type = `${key.projectId}\u0000${key.typeIndex}`
        const list = byType.get(type)
        if (list) list.push(key)
        else byType.set(type, [key])
      }
      const found = new Map<string, Properties>()
      const reads = [...byType.values()].map(async (list) => {
        const { projectId, typeIndex } = list[0]!
        const filter = {
          project_id: projectId,
          group_type_index: typeIndex,
          group_key: { $in: list.map((k) => k.groupKey) },
        }
        const rows = await findAll<GroupDocument, Pick<GroupDocument, 'group_key' | 'group_properties'>>(
          collection,
          filter,
          { _id: 0, group_key: 1, group_properties: 1 },
          list.length,
        )
        for (const row of rows)
          found.set(keyId({ projectId, typeIndex, groupKey: row.group_key }), row.group_properties ?? {})
      })
      await Promise.all(reads)
      return found
    })
  }

  /** The stored properties of the group, undefined when it has never been stored. */
  properties(projectId: number, typeIndex: number, groupKey: string): Promise<Properties | undefined> {
    return this.groups.get({ projectId, typeIndex, groupKey })
  }
}
