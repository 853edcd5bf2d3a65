/**
 * The stored shapes of groups and group types (documented in README.md): the decide plugin reads
 * them directly for group flags, so changing a field here is a change of contract.
 */
import type { Db, IndexDescription } from 'mongodb'
import { retryableError } from '../../core/plugin-api.ts'

export const GROUP_COLLECTIONS = {
  groups: 'groups',
  groupTypeMappings: 'group_type_mappings',
} as const

/** One group type of a project and the `$group_<index>` column it owns, forever. */
export interface GroupTypeMappingDocument {
  project_id: number
  group_type: string
  /** 0–4, the lowest free index when the type was first seen. */
  group_type_index: number
  created_at: Date
}

/** One group, written by `$groupidentify`. */
export interface GroupDocument {
  project_id: number
  group_type_index: number
  group_key: string
  /** Property names are stored as sent (`$browser`, `a.b`); read them with `Object.hasOwn`. */
  group_properties: Record<string, unknown>
  /** The earliest event time that identified the group. */
  created_at: Date
  /** 1 when created, +1 on every write that changed something (the optimistic-lock token). */
  version: number
}

const INDEXES: Record<string, IndexDescription[]> = {
  [GROUP_COLLECTIONS.groups]: [
    { key: { project_id: 1, group_type_index: 1, group_key: 1 }, name: 'project_type_key_unique', unique: true },
  ],
  [GROUP_COLLECTIONS.groupTypeMappings]: [
    // both unique: one type never gets two indexes, and two types never share one
    { key: { project_id: 1, group_type: 1 }, name: 'project_type_unique', unique: true },
    { key: { project_id: 1, group_type_index: 1 }, name: 'project_index_unique', unique: true },
  ],
}

export async function ensureGroupIndexes(db: Db): Promise<void> {
  for (const [collection, indexes] of Object.entries(INDEXES)) await db.collection(collection).createIndexes(indexes)
}

export const DUPLICATE_KEY = 11000

export function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === DUPLICATE_KEY
}

/** A write that kept losing races: the request answers 503 and the SDK retries it. */
export function contention(what: string): Error {
  return retryableError(`${what}: too many concurrent writers, retry`)
}
