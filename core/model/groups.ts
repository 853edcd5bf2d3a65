/**
 * The stored groups (shapes in the contract: GroupDocument, GroupTypeMappingDocument): their
 * indexes, and the `groups` service the core provides to every plugin, which decide reads group
 * flags through. group-update writes the groups and assigns group types; decide adds the types
 * of imported definitions.
 *
 * Reads of group properties made by concurrent flags requests are coalesced into one find per
 * project and group type and event-loop turn (coalesce.ts): under load every flags request with
 * a group flag would otherwise send its own command. The find is an equality on the whole unique
 * index (`group_key: {$in}`), so it reads one index entry per key. A read joins a batch that is
 * sent after it was made: a group `$set` captured a moment ago decides the next flags call.
 * What is read is kept while a change stream of the groups says it is unchanged (watched-cache.ts);
 * group-update tells the reader of its own writes (`changed`), so that guarantee holds.
 */
import type { Db, IndexDescription } from 'mongodb'
import type { Logger } from 'pino'
import { GROUP_COLLECTIONS } from '../plugin-api.ts'
import type { CachedRead, GroupDocument, GroupTypeMappingDocument, GroupsReader } from '../plugin-api.ts'
import { DocumentCache } from './watched-cache.ts'
import { findAll } from './find-all.ts'
import { Coalescer } from './coalesce.ts'

export const GROUP_INDEXES: Record<string, IndexDescription[]> = {
  [GROUP_COLLECTIONS.groups]: [
    { key: { project_id: 1, group_type_index: 1, group_key: 1 }, name: 'project_type_key_unique', unique: true },
  ],
  [GROUP_COLLECTIONS.groupTypeMappings]: [
    // both unique: one type never gets two indexes, and two types never share one
    { key: { project_id: 1, group_type: 1 }, name: 'project_type_unique', unique: true },
    { key: { project_id: 1, group_type_index: 1 }, name: 'project_index_unique', unique: true },
  ],
}

type Properties = Record<string, unknown>

interface Key {
  projectId: number
  typeIndex: number
  groupKey: string
}

/**
 * How long after a find of one group the next waits (CoalescerOptions.spacingMs), as the persons
 * plugin's flags reads do: flags requests arriving one by one share their reads.
 */
const READ_SPACING_MS = 1

const keyId = (key: Key) => `${key.projectId}\u0000${key.typeIndex}\u0000${key.groupKey}`
const TYPE_PROJECTION = { _id: 0, project_id: 1, group_type: 1, group_type_index: 1 } as const

export class GroupStore implements GroupsReader {
  private readonly groups: Coalescer<Key, CachedRead<Properties>>
  private readonly cache: DocumentCache<Properties>

  /** `spacingMs`: how far apart group finds start; `logger`: where a missing change stream is told. */
  constructor(
    private readonly db: Db,
    { spacingMs = READ_SPACING_MS, logger }: { spacingMs?: number; logger?: Logger } = {},
  ) {
    const collection = db.collection<GroupDocument>(GROUP_COLLECTIONS.groups)
    this.cache = new DocumentCache(db.collection(GROUP_COLLECTIONS.groups), {
      onUnavailable: (error) =>
        logger?.info(
          { reason: error.message },
          'groups read by flags are not cached: the groups collection has no change stream (a standalone MongoDB?)',
        ),
    })
    this.groups = new Coalescer(
      keyId,
      async (keys) => {
        const byType = new Map<string, Key[]>()
        for (const key of keys) {
          const type = `${key.projectId}\u0000${key.typeIndex}`
          const list = byType.get(type)
          if (list) list.push(key)
          else byType.set(type, [key])
        }
        const found = new Map<string, CachedRead<Properties>>()
        const reads = [...byType.values()].map(async (list) => {
          const { projectId, typeIndex } = list[0]!
          const filter = {
            project_id: projectId,
            group_type_index: typeIndex,
            group_key: { $in: list.map((k) => k.groupKey) },
          }
          const rows = await findAll<
            GroupDocument,
            Pick<GroupDocument, 'group_key' | 'group_properties'> & { _id: unknown }
          >(collection, filter, { _id: 1, group_key: 1, group_properties: 1 }, list.length)
          for (const row of rows)
            found.set(keyId({ projectId, typeIndex, groupKey: row.group_key }), {
              value: row.group_properties ?? {},
              documentId: row._id,
            })
        })
        await Promise.all(reads)
        return found
      },
      { spacingMs },
    )
  }

  properties(projectId: number, typeIndex: number, groupKey: string): Promise<Properties | undefined> {
    const key = { projectId, typeIndex, groupKey }
    return this.cache.read(keyId(key), () => this.groups.get(key))
  }

  changed(projectId: number, typeIndex: number, groupKey: string): void {
    this.cache.changed(keyId({ projectId, typeIndex, groupKey }))
  }

  close(): void {
    this.cache.close()
  }

  async typeMapping(projectId: number): Promise<Record<string, string>> {
    return (await this.typeMappings([projectId])).get(projectId) ?? {}
  }

  async typeMappings(projectIds: readonly number[]): Promise<Map<number, Record<string, string>>> {
    const docs = await this.db
      .collection<GroupTypeMappingDocument>(GROUP_COLLECTIONS.groupTypeMappings)
      .find(projectIds.length === 1 ? { project_id: projectIds[0] } : { project_id: { $in: [...projectIds] } }, {
        projection: TYPE_PROJECTION,
      })
      .toArray()
    const byProject = new Map<number, Record<string, string>>(projectIds.map((id) => [id, {}]))
    for (const doc of docs.sort((a, b) => a.group_type_index - b.group_type_index)) {
      const mapping = byProject.get(doc.project_id)
      if (mapping) mapping[String(doc.group_type_index)] = doc.group_type
    }
    return byProject
  }
}
