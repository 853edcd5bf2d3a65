import { ObjectId } from 'bson'
import { decode, encode, isPlainObject, isRegExpValue, type Doc } from '../bson/codec.ts'
import { assemble, elementsOf, objectIdElement } from '../bson/raw.ts'
import { mongoError } from '../errors.ts'
import type { Catalog } from './catalog.ts'
import type { Collection } from './collection.ts'
import { matching, sortDocs } from './find-exec.ts'
import { encodeKey } from './key-encoding.ts'
import { compileFilter } from './matcher.ts'
import { plan, type SortSpec } from './planner.ts'
import { applyUpdate, buildUpsert, type UpdateInput } from './update-apply.ts'
import { checkUpdatedDepth } from './depth.ts'

export const MAX_BSON_SIZE = 16 * 1024 * 1024

function checkId(id: unknown): void {
  if (Array.isArray(id)) throw mongoError('BadValue', "can't use an array for _id")
  if (isRegExpValue(id)) throw mongoError('BadValue', "can't use a regex for _id")
  if (isPlainObject(id) && Object.keys(id).some((k) => k.startsWith('$'))) {
    throw mongoError('DollarPrefixedFieldName', `_id fields may not contain '$'-prefixed fields`)
  }
}

/** The stored form of an inserted document: the client's bytes, `_id` first (made if absent). */
export function prepareInsert(raw: Uint8Array | undefined, doc: Doc): { raw: Uint8Array; doc: Doc } {
  if (!raw) raw = encode(doc)
  if (raw.length > MAX_BSON_SIZE) {
    throw mongoError(
      'BSONObjectTooLarge',
      `object to insert too large. size in bytes: ${raw.length}, max size: ${MAX_BSON_SIZE}`,
    )
  }
  const elements = elementsOf(raw)
  if (doc._id === undefined) {
    const id = new ObjectId()
    const stored = assemble([
      objectIdElement(id.id),
      ...elements.map((e) => (raw as Uint8Array).subarray(e.start, e.end)),
    ])
    return { raw: stored, doc: { _id: id, ...doc } }
  }
  checkId(doc._id)
  if (elements[0]?.name === '_id') return { raw, doc }
  const id = elements.find((e) => e.name === '_id')
  const others = elements.filter((e) => e.name !== '_id')
  const parts = [id, ...others].filter((e) => e !== undefined).map((e) => (raw as Uint8Array).subarray(e.start, e.end))
  const { _id, ...rest } = doc
  return { raw: assemble(parts), doc: { _id, ...rest } }
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
