/**
 * The audit log of the admin API: one document per change (what, when, which key, the states
 * before and after and their difference) in the `audit_log` collection. Routes write the change
 * first and its record second, and answer only once both are stored: an acknowledged change
 * always has its record. A crash between the two writes leaves a change that was never
 * acknowledged and has no record; for flags and cohorts the gap shows as a missing version in
 * the entity's history. Nothing updates or deletes a record.
 */
import type { Context } from 'koa'
import { ObjectId } from 'mongodb'
import type { Db, Document, Filter } from 'mongodb'
import type { Static } from 'typebox'
import type { AuditChange, AuditLog } from '../plugin-api.ts'
import { httpError } from '../errors.ts'
import { COLLECTIONS } from '../model/collections.ts'
import { asJson, diffStates } from './diff.ts'
import type { FieldChange } from './diff.ts'
import type { AuditQuery } from './schemas.ts'
import { newestFirstPage, pageLimit } from './cursor.ts'

export interface AuditDocument {
  _id?: ObjectId
  project_id: number
  created_at: Date
  entity_type: string
  entity_id: string | null
  action: string
  /** The label of the admin key that made the change (null: a key without one, e.g. before labels existed). */
  actor: { key_label: string | null }
  version: number | null
  changes: FieldChange[]
  before: unknown
  after: unknown
  details: Record<string, unknown> | null
}

/** The action that starts an entity's history afresh (stateAt). */
const IMPORTED = 'imported'
const DEFAULT_LIMIT = 50
const MAX_LIMIT = 500

export class MongoAuditLog implements AuditLog {
  constructor(private readonly db: Db) {}

  private get collection() {
    return this.db.collection<AuditDocument>(COLLECTIONS.auditLog)
  }

  async record(ctx: Context, change: AuditChange | readonly AuditChange[]): Promise<void> {
    const changes: readonly AuditChange[] = Array.isArray(change) ? change : [change as AuditChange]
    if (changes.length === 0) return
    const now = new Date()
    const label = typeof ctx.state.adminKeyLabel === 'string' ? ctx.state.adminKeyLabel : null
    await this.collection.insertMany(
      changes.map((one) => toDocument(one, now, label)),
      { ordered: true },
    )
  }

  async stateAt(projectId: number, entityType: string, entityId: string | number, version: number): Promise<unknown> {
    const entity = { project_id: projectId, entity_type: entityType, entity_id: String(entityId) }
    const newest = { sort: { created_at: -1, _id: -1 } } as const
    const imported = await this.collection.findOne({ ...entity, action: IMPORTED }, newest)
    const doc = await this.collection.findOne(
      imported ? { ...entity, version, created_at: { $gte: imported.created_at } } : { ...entity, version },
      newest,
    )
    return doc ? doc.after : undefined
  }

  async get(projectId: number, id: string): Promise<ReturnType<typeof auditJson> | undefined> {
    if (!ObjectId.isValid(id) || !/^[0-9a-f]{24}$/i.test(id)) return undefined
    const doc = await this.collection.findOne({ project_id: projectId, _id: new ObjectId(id) })
    return doc ? auditJson(doc) : undefined
  }

  /** Newest first, filtered by entity, a page at a time; `next` is the URL of the next page or null. */
  async list(projectId: number, query: Static<typeof AuditQuery>, url: URL) {
    const limit = pageLimit(query.limit, DEFAULT_LIMIT, MAX_LIMIT)
    if (query.entity_id !== undefined && query.entity_type === undefined)
      throw httpError('invalid_input', 'entity_id needs entity_type', 'entity_type')
    const filter: Filter<AuditDocument> = { project_id: projectId }
    if (query.entity_type !== undefined) filter.entity_type = query.entity_type
    if (query.entity_id !== undefined) filter.entity_id = query.entity_id
    const { page, next } = await newestFirstPage(this.collection, filter, query.cursor, limit, url)
    return { results: page.map(auditJson), next }
  }
}

function toDocument(change: AuditChange, createdAt: Date, label: string | null): AuditDocument {
  const before = asJson(change.before)
  const after = asJson(change.after)
  return {
    project_id: change.projectId,
    created_at: createdAt,
    entity_type: change.entityType,
    entity_id: change.entityId === null ? null : String(change.entityId),
    action: change.action,
    actor: { key_label: label },
    version: change.version ?? null,
    changes: diffStates(before ?? {}, after ?? {}, change.ignore),
    before,
    after,
    details: change.details ?? null,
  }
}

export function auditJson(doc: AuditDocument | Document) {
  return {
    id: String(doc._id),
    created_at: (doc.created_at as Date).toISOString(),
    project_id: doc.project_id as number,
    entity_type: doc.entity_type as string,
    entity_id: doc.entity_id as string | null,
    action: doc.action as string,
    actor: doc.actor as { key_label: string | null },
    version: doc.version as number | null,
    changes: doc.changes as FieldChange[],
    before: doc.before,
    after: doc.after,
    details: doc.details ?? null,
  }
}
