import { Aggregator, Query } from 'mingo'
import { decode, encode, isPlainObject, type Doc } from '../bson/codec.ts'
import { applyNumericHints, numericHints } from '../bson/numeric-types.ts'
import { assemble, elementsOf } from '../bson/raw.ts'
import { mongoError, toMongoError } from '../errors.ts'
import type { Collection } from './collection.ts'
import { countScannedObject } from '../commands/counters.ts'
import { filterMapped, mapped, skipLimit } from './iterators.ts'
import { compileFilter, MINGO_OPTIONS, type Matcher } from './matcher.ts'
import { plan, type Plan, type SortSpec } from './planner.ts'

export interface FindRequest {
  filter: Doc
  sort: SortSpec
  projection?: Doc
  skip: number
  /** 0 = no limit. */
  limit: number
  hint?: unknown
}

/** A matching document, as stored bytes (no projection) or as a projected document. */
export type Output = Uint8Array

/** Projects a decoded document; `raw`, when set, does the same on the stored bytes. */
export type Projector = ((doc: Doc) => Doc) & { raw?: (bytes: Uint8Array) => Buffer }

/**
 * A projection that only includes or only excludes top-level fields (`{_id: 0}`, `{_id: 0,
 * distinct_id: 1}`), applied to the stored bytes: the kept elements are copied as they are, in the
 * document's order, which is what MongoDB returns. Anything else (paths, operators, literals, a
 * mix of inclusion and exclusion) is left to mingo.
 */
function topLevelProjection(projection: Doc): ((bytes: Uint8Array) => Buffer) | undefined {
  let keepId = true
  let idNamed = false
  const included = new Set<string>()
  const excluded = new Set<string>()
  for (const [field, value] of Object.entries(projection)) {
    if (typeof value !== 'number' && typeof value !== 'boolean') return undefined
    if (field === '' || field.startsWith('$') || field.includes('.')) return undefined
    const on = value !== 0 && value !== false
    if (field === '_id') {
      keepId = on
      idNamed = true
    } else (on ? included : excluded).add(field)
  }
  if (included.size > 0 && excluded.size > 0) return undefined
  // `{_id: 1}` alone includes only _id, as MongoDB does; beside exclusions it just keeps it
  const inclusion = included.size > 0 || (excluded.size === 0 && idNamed && keepId)
  return (bytes) => {
    const parts: Uint8Array[] = []
    for (const element of elementsOf(bytes)) {
      const keep =
        element.name === '_id' ? keepId : inclusion ? included.has(element.name) : !excluded.has(element.name)
      if (keep) parts.push(bytes.subarray(element.start, element.end))
    }
    return assemble(parts)
  }
}

export function makeProjector(projection: unknown): Projector | undefined {
  if (projection === undefined || projection === null) return undefined
  if (!isPlainObject(projection)) throw mongoError('TypeMismatch', 'Expected field projection to be of type object')
  if (Object.keys(projection).length === 0) return undefined
  const raw = topLevelProjection(projection)
  // A top-level inclusion or exclusion is valid by construction and applied to the bytes: its mingo
  // query (a tenth of a point find's cost in the database) is only built if a document is projected.
  let project = raw ? undefined : mingoProjector(projection)
  const projector: Projector = (doc) => (project ??= mingoProjector(projection))(doc)
  projector.raw = raw
  return projector
}

/** Projects with mingo; built eagerly, so an invalid projection fails the command before any document. */
function mingoProjector(projection: Doc): (doc: Doc) => Doc {
  const query = new Query({}, MINGO_OPTIONS)
  const project = (doc: Doc): Doc => {
    let out: Doc
    try {
      out = query.find([doc], projection).next() as Doc
    } catch (error) {
      throw toMongoError(error)
    }
    // MongoDB keeps the document's field order; mingo may not. Computed fields come last.
    const ordered: Doc = {}
    for (const key of Object.keys(doc)) if (key in out) ordered[key] = out[key]
    for (const key of Object.keys(out)) if (!(key in ordered)) ordered[key] = out[key]
    return ordered
  }
  project({})
  return project
}

/** A projected document's bytes, int64 and integral doubles kept as the stored ones were. */
export function projectRaw(project: Projector, raw: Uint8Array, doc?: Doc): Buffer {
  if (project.raw) return project.raw(raw)
  const out = project(doc ?? decode(raw))
  applyNumericHints(out, numericHints(raw))
  return encode(out)
}

/** Sorts with mingo, keeping only the first `keep` documents when a limit allows it. */
export function sortDocs(docs: Doc[], sort: SortSpec, keep: number): Doc[] {
  const spec = Object.fromEntries(sort)
  const stages: Doc[] = [{ $sort: spec }]
  if (keep > 0) stages.push({ $limit: keep })
  try {
    return new Aggregator(stages, MINGO_OPTIONS).run(docs) as Doc[]
  } catch (error) {
    throw toMongoError(error)
  }
}

export interface Candidate {
  id: string
  raw: Buffer
  /** Decoded only when the filter had to be checked. */
  doc?: Doc
}

/** The plan's candidates that match the filter, lazily. */
export function matching(coll: Collection, p: Plan, matcher: Matcher): IterableIterator<Candidate> {
  const exact = p.exact || matcher.empty
  return filterMapped(p.ids(), (id): Candidate | undefined => {
    const raw = coll.raw(id)
    if (!raw) return undefined
    countScannedObject()
    if (exact) return { id, raw }
    const doc = decode(raw)
    return matcher.test(doc) ? { id, raw, doc } : undefined
  })
}

/** The result documents of a find, lazily (cursor batches pull from it). */
export function runFind(coll: Collection | undefined, req: FindRequest): Iterator<Output> {
  const matcher = compileFilter(req.filter)
  const project = makeProjector(req.projection)
  if (!coll) return [][Symbol.iterator]()
  const p = plan(coll, req.filter, req.sort, req.hint)
  const natural = req.sort.length === 1 && req.sort[0][0] === '$natural'
  if (req.sort.length > 0 && !p.ordered && !natural) return sortedFind(coll, p, matcher, req, project)
  return mapped(skipLimit(matching(coll, p, matcher), req.skip, req.limit), (c) =>
    project ? projectRaw(project, c.raw, c.doc) : c.raw,
  )
}

function sortedFind(
  coll: Collection,
  p: Plan,
  matcher: Matcher,
  req: FindRequest,
  project: Projector | undefined,
): Iterator<Output> {
  const keep = req.limit > 0 ? req.skip + req.limit : 0
  // mingo sorts the very objects it is given: the map leads back to each one's stored bytes.
  let rawOf = new Map<Doc, Buffer>()
  let docs: Doc[] = []
  for (const c of matching(coll, p, matcher)) {
    const doc = c.doc ?? decode(c.raw)
    rawOf.set(doc, c.raw)
    docs.push(doc)
    if (keep > 0 && docs.length > 2 * keep + 1000) {
      docs = sortDocs(docs, req.sort, keep)
      rawOf = new Map(docs.map((d) => [d, rawOf.get(d) as Buffer]))
    }
  }
  docs = sortDocs(docs, req.sort, keep)
  const page = docs.slice(req.skip, req.limit > 0 ? req.skip + req.limit : undefined)
  return page
    .map((d) => {
      const raw = rawOf.get(d) ?? encode(d)
      return project ? projectRaw(project, raw, d) : raw
    })
    [Symbol.iterator]()
}
