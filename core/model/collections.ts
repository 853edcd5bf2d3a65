/**
 * Collection names and the indexes of the collections the core owns or several plugins share,
 * created at boot (createIndexes is idempotent). A plugin creates the indexes of the collections
 * only it reads and writes in its setup (sink-mongo's events, decide's definitions).
 */
import type { Db, IndexDescription } from 'mongodb'
import { GROUP_INDEXES } from './groups.ts'

export const COLLECTIONS = {
  projects: 'projects',
  counters: 'counters',
  ingestionWarnings: 'ingestion_warnings',
  deadLetters: 'dead_letters',
  /** Events stored and dropped per project and minute (core/admin/health.ts); expires after two hours. */
  ingestionMinutes: 'ingestion_minutes',
  /** Changes made through the admin API (core/admin/audit.ts); never updated or deleted. */
  auditLog: 'audit_log',
} as const

const CORE_INDEXES: Record<string, IndexDescription[]> = {
  [COLLECTIONS.projects]: [
    { key: { id: 1 }, name: 'id_unique', unique: true },
    { key: { api_token: 1 }, name: 'api_token_unique', unique: true },
    { key: { secret_api_token: 1 }, name: 'secret_api_token_unique', unique: true },
  ],
  [COLLECTIONS.ingestionWarnings]: [{ key: { project_id: 1, created_at: -1 }, name: 'project_created_at' }],
  [COLLECTIONS.deadLetters]: [{ key: { project_id: 1, created_at: -1 }, name: 'project_created_at' }],
  [COLLECTIONS.ingestionMinutes]: [
    { key: { project_id: 1, minute: 1 }, name: 'project_minute_unique', unique: true },
    { key: { minute: 1 }, name: 'minute_ttl', expireAfterSeconds: 2 * 60 * 60 },
  ],
  ...GROUP_INDEXES,
  [COLLECTIONS.auditLog]: [
    { key: { project_id: 1, created_at: -1, _id: -1 }, name: 'project_newest' },
    {
      key: { project_id: 1, entity_type: 1, entity_id: 1, created_at: -1, _id: -1 },
      name: 'project_entity_newest',
    },
  ],
}

export async function ensureCoreIndexes(db: Db): Promise<void> {
  for (const [collection, indexes] of Object.entries(CORE_INDEXES))
    await db.collection(collection).createIndexes(indexes)
}

/** Next value of a named sequence (project ids are small integers, like PostHog's team ids). */
export async function nextSequence(db: Db, name: string): Promise<number> {
  const doc = await db
    .collection<{ _id: string; value: number }>(COLLECTIONS.counters)
    .findOneAndUpdate({ _id: name }, { $inc: { value: 1 } }, { upsert: true, returnDocument: 'after' })
  if (!doc) throw new Error(`sequence ${name} was not returned`)
  return doc.value
}
