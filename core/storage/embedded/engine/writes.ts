import { ObjectId } from 'bson'
import { decode, isPlainObject, isRegExpValue, type Doc } from '../bson/codec.ts'
import { assemble, elementNamed, objectIdElement } from '../bson/raw.ts'
import { mongoError } from '../errors.ts'
import type { Catalog } from './catalog.ts'
import type { Collection } from './collection.ts'
import { matching, sortDocs } from './find-exec.ts'
import { encodeKey } from './key-encoding.ts'
import { compileFilter } from './matcher.ts'
import { plan, type SortSpec } from './planner.ts'
import { applyUpdate, buildUpsert, type UpdateInput } from './update-apply.ts'
import { checkInsertDepth, checkUpdatedDepth } from './depth.ts'

export const MAX_BSON_SIZE = 16 * 1024 * 1024

function checkId(id: unknown): void {
  if (Array.isArray(id)) throw mongoError('BadValue', "can't use an array for _id")
  if (isRegExpValue(id)) throw mongoError('BadValue', "can't use a regex for _id")
  if (isPlainObject(id) && Object.keys(id).some((k) => k.startsWith('$'))) {
    throw mongoError('DollarPrefixedFieldName', `_id fields may not contain '$'-prefixed fields`)
  }
}

const ID = new TextEncoder().encode('_id')

/** The stored form of an inserted document: the client's bytes, `_id` first (made if absent). */
function storedForm(raw: Uint8Array): Uint8Array {
  if (raw.length > MAX_BSON_SIZE) {
    throw mongoError(
      'BSONObjectTooLarge',
      `object to insert too large. size in bytes: ${raw.length}, max size: ${MAX_BSON_SIZE}`,
    )
  }
  const elements = raw.subarray(4, raw.length - 1)
  const id = elementNamed(raw, ID)
  if (!id) return assemble([objectIdElement(new ObjectId().id), elements])
  if (id.start === 4) return raw
  return assemble([raw.subarray(id.start, id.end), raw.subarray(4, id.start), raw.subarray(id.end, raw.length - 1)])
}

/**
 * Inserts a document as its client sent it (raw BSON, already checked to be well-formed): it is
 * decoded only in the fields the collection's indexes read, not in full.
 */
export function insertDocument(coll: Collection, sent: Uint8Array): void {
  const raw = storedForm(sent)
  const doc = coll.indexedFields(raw)
  checkId(doc._id)
  checkInsertDepth(raw)
  coll.insert(raw, doc)
}

export interface UpdateStatement extends UpdateInput {
  multi: boolean
  upsert: boolean
  sort?: SortSpec
  hint?: unknown
}

export interface UpdateResult {
  matched: number
  modified: number
  upsertedId?: unknown
  /** The (first) document touched, before and after, for findAndModify. */
  first?: { before?: Doc; beforeRaw?: Buffer; after: Doc; afterRaw: Buffer }
}

function targets(
  coll: Collection,
  filter: Doc,
  multi: boolean,
  sort: SortSpec | undefined,
  hint: unknown,
): Array<{ raw: Buffer; doc: Doc }> {
  const matcher = compileFilter(filter)
  const p = plan(coll, filter, sort ?? [], hint)
  const out: Array<{ raw: Buffer; doc: Doc }> = []
  if (sort && sort.length > 0 && !p.ordered) {
    const docs = [...matching(coll, p, matcher)].map((c) => c.doc ?? decode(c.raw))
    const sorted = sortDocs(docs, sort, multi ? 0 : 1)
    return sorted.map((doc) => ({ doc, raw: coll.raw(encodeKey(doc._id)) as Buffer })).filter((t) => t.raw)
  }
  for (const c of matching(coll, p, matcher)) {
    out.push({ raw: c.raw, doc: c.doc ?? decode(c.raw) })
    if (!multi) break
  }
  return out
}

/** One update statement (or findAndModify's update), documents changed one at a time. */
export function executeUpdate(catalog: Catalog, db: string, name: string, stmt: UpdateStatement): UpdateResult {
  const existing = catalog.get(db, name)
  compileFilter(stmt.filter)
  const found = existing ? targets(existing, stmt.filter, stmt.multi, stmt.sort, stmt.hint) : []
  const result: UpdateResult = { matched: 0, modified: 0 }
  if (found.length === 0) {
    if (!stmt.upsert) return result
    const coll = catalog.ensure(db, name)
    const created = buildUpsert(stmt)
    checkId(created.doc._id)
    checkUpdatedDepth(created.raw)
    coll.insert(created.raw, created.doc)
    return {
      matched: 0,
      modified: 0,
      upsertedId: created.doc._id,
      first: { after: created.doc, afterRaw: created.raw },
    }
  }
  const coll = existing as Collection
  for (const target of found) {
    const next = applyUpdate(target.doc, target.raw, stmt)
    result.matched += 1
    if (!next.raw.equals(target.raw)) {
      checkUpdatedDepth(next.raw)
      coll.replace(target.doc, next.doc, next.raw, stmt.parsed.kind === 'replacement' ? 'replace' : 'update')
      result.modified += 1
    }
    result.first ??= { before: target.doc, beforeRaw: target.raw, after: next.doc, afterRaw: next.raw }
  }
  return result
}

/** One delete statement; returns the deleted documents (findAndModify returns the first). */
export function executeDelete(
  catalog: Catalog,
  db: string,
  name: string,
  filter: Doc,
  multi: boolean,
  sort?: SortSpec,
  hint?: unknown,
): Array<{ raw: Buffer; doc: Doc }> {
  const coll = catalog.get(db, name)
  compileFilter(filter)
  if (!coll) return []
  const found = targets(coll, filter, multi, sort, hint)
  for (const target of found) coll.remove(target.doc)
  return found
}
