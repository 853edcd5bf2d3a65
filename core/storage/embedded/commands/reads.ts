import { isPlainObject, decode, type Doc } from '../bson/codec.ts'
import { runAggregate } from '../engine/aggregate-exec.ts'
import { encodeKey } from '../engine/key-encoding.ts'
import { runFind, matching, type FindRequest } from '../engine/find-exec.ts'
import { compileFilter } from '../engine/matcher.ts'
import { parseSort, plan } from '../engine/planner.ts'
import { mongoError, MongoServerError, notSupported } from '../errors.ts'
import type { IncomingCommand } from '../wire/messages.ts'
import { collStatsDocument } from './coll-stats.ts'
import { collectionOf, dbOf, optionalDoc, optionalNumber, type CommandHandler } from './context.ts'

const UNSUPPORTED_FIND_OPTIONS = Object.entries({
  tailable: 'tailable cursors',
  awaitData: 'tailable cursors',
  oplogReplay: 'oplogReplay',
  min: 'the find option min',
  max: 'the find option max',
  returnKey: 'the find option returnKey',
  showRecordId: 'the find option showRecordId',
  let: "the 'let' option",
})

function checkCollation(body: Doc): void {
  const collation = body.collation
  if (collation === undefined || collation === null) return
  if (isPlainObject(collation) && collation.locale === 'simple') return
  throw notSupported('collation')
}

function nonNegative(body: Doc, field: string): number {
  const value = optionalNumber(body, field) ?? 0
  if (value < 0)
    throw mongoError(
      'BadValue',
      `${field === 'limit' ? 'Limit' : 'Skip'} value must be non-negative, but received: ${value}`,
    )
  return Math.trunc(value)
}

export function findRequest(body: Doc, filterField = 'filter'): FindRequest {
  for (const [option, what] of UNSUPPORTED_FIND_OPTIONS) {
    if (body[option] !== undefined && body[option] !== false) throw notSupported(what)
  }
  checkCollation(body)
  return {
    filter: optionalDoc(body, filterField) ?? {},
    sort: parseSort(optionalDoc(body, 'sort')),
    projection: optionalDoc(body, 'projection'),
    skip: nonNegative(body, 'skip'),
    limit: nonNegative(body, 'limit'),
    hint: body.hint,
  }
}

function batchSizeOf(body: Doc): number | undefined {
  const size = optionalNumber(body, 'batchSize')
  if (size !== undefined && size < 0)
    throw mongoError('BadValue', `BatchSize value must be non-negative, but received: ${size}`)
  return size
}

function valuesAt(value: unknown, parts: string[], out: unknown[]): void {
  if (parts.length === 0) {
    if (Array.isArray(value)) out.push(...value)
    else if (value !== undefined) out.push(value)
    return
  }
  if (Array.isArray(value)) {
    for (const item of value) valuesAt(item, parts, out)
  } else if (isPlainObject(value)) {
    valuesAt(value[parts[0]], parts.slice(1), out)
  }
}

function aggregateCursor(cmd: IncomingCommand): number | undefined {
  const cursor = cmd.body.cursor
  if (cursor === undefined) {
    if (cmd.body.explain) return undefined
    throw mongoError('FailedToParse', "The 'cursor' option is required, except for aggregate with the explain argument")
  }
  if (!isPlainObject(cursor)) throw mongoError('TypeMismatch', 'cursor field must be missing or an object')
  return batchSizeOf(cursor) ?? undefined
}

export const readCommands: Record<string, CommandHandler> = {
  find: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'find')
    const req = findRequest(cmd.body)
    const source = runFind(ctx.catalog.get(db, name), req)
    return ctx.cursors.open(`${db}.${name}`, source, batchSizeOf(cmd.body) || undefined, cmd.body.singleBatch === true)
  },
  getMore: async (cmd, ctx) => {
    const id = cmd.body.getMore
    if (typeof id !== 'number') throw mongoError('TypeMismatch', "Field 'getMore' must be of type long")
    const collection = cmd.body.collection
    if (typeof collection !== 'string') throw mongoError('TypeMismatch', "Field 'collection' must be of type string")
    return ctx.cursors.getMore(
      id,
      `${dbOf(cmd)}.${collection}`,
      batchSizeOf(cmd.body),
      optionalNumber(cmd.body, 'maxTimeMS'),
    )
  },
  killCursors: (cmd, ctx) => {
    const ids = Array.isArray(cmd.body.cursors) ? cmd.body.cursors : []
    const killed: unknown[] = []
    const notFound: unknown[] = []
    for (const id of ids) (typeof id === 'number' && ctx.cursors.kill(id) ? killed : notFound).push(id)
    return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 }
  },
  count: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'count')
    const req = findRequest({ ...cmd.body, sort: undefined, projection: undefined }, 'query')
    const coll = ctx.catalog.get(db, name)
    // No query (the driver's estimatedDocumentCount): the collection's counter, as MongoDB answers
    // it from metadata; walking every document took seconds per million on lmdb.
    if (coll && Object.keys(req.filter).length === 0 && req.hint === undefined) {
      const n = Math.max(0, coll.size - req.skip)
      return { n: req.limit > 0 ? Math.min(n, req.limit) : n, ok: 1 }
    }
    const source = runFind(coll, req)
    let n = 0
    for (let item = source.next(); !item.done; item = source.next()) n += 1
    return { n, ok: 1 }
  },
  distinct: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'distinct')
    const key = cmd.body.key
    if (typeof key !== 'string')
      throw mongoError('TypeMismatch', "BSON field 'distinct.key' is missing but a required field")
    checkCollation(cmd.body)
    const filter = optionalDoc(cmd.body, 'query') ?? {}
    const matcher = compileFilter(filter)
    const coll = ctx.catalog.get(db, name)
    const seen = new Map<string, unknown>()
    if (coll) {
      for (const c of matching(coll, plan(coll, filter, [], cmd.body.hint), matcher)) {
        const found: unknown[] = []
        valuesAt(c.doc ?? decode(c.raw), key.split('.'), found)
        for (const v of found) if (!seen.has(encodeKey(v))) seen.set(encodeKey(v), v)
      }
    }
    const values = [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v)
    return { values, ok: 1 }
  },
  aggregate: (cmd, ctx) => {
    const db = dbOf(cmd)
    const target = cmd.body.aggregate
    const collection = target === 1 ? undefined : collectionOf(cmd, 'aggregate')
    const batchSize = aggregateCursor(cmd)
    checkCollation(cmd.body)
    const pipeline = Array.isArray(cmd.body.pipeline) ? (cmd.body.pipeline as Doc[]) : cmd.body.pipeline
    const ns = `${db}.${collection ?? '$cmd.aggregate'}`
    if (Array.isArray(pipeline) && isPlainObject(pipeline[0]) && '$changeStream' in pipeline[0]) {
      if (!ctx.changeStreams)
        throw new MongoServerError(40573, 'The $changeStream stage is only supported on replica sets')
      return ctx.cursors.open(ns, ctx.changeStreams.open(db, collection, pipeline), batchSize)
    }
    if (cmd.body.explain) return explainAggregate(ns)
    const variables = optionalDoc(cmd.body, 'let')
    if (Array.isArray(pipeline) && isPlainObject(pipeline[0]) && '$collStats' in pipeline[0]) {
      if (collection === undefined)
        throw mongoError('InvalidNamespace', "{aggregate: 1} is not valid for '$collStats'; a collection is required.")
      const stats = collStatsDocument(ctx, db, collection, pipeline[0].$collStats)
      const rest = { db, collection, pipeline: pipeline.slice(1), variables, source: [stats] }
      return ctx.cursors.open(ns, runAggregate(ctx.catalog, rest), batchSize)
    }
    const source = runAggregate(ctx.catalog, { db, collection, pipeline, hint: cmd.body.hint, variables })
    return ctx.cursors.open(ns, source, batchSize)
  },
  explain: (cmd, ctx) => {
    const inner = optionalDoc(cmd.body, 'explain')
    if (!inner) throw mongoError('FailedToParse', 'explain command requires a nested object')
    const [verb] = Object.keys(inner)
    const db = dbOf(cmd)
    if (verb !== 'find' && verb !== 'count' && verb !== 'delete' && verb !== 'update') {
      if (verb === 'aggregate') return explainAggregate(`${db}.${String(inner.aggregate)}`)
      throw notSupported(`explain of ${verb}`)
    }
    const name = String(inner[verb])
    const filter = (verb === 'count' ? inner.query : verb === 'find' ? inner.filter : undefined) ?? {}
    const coll = ctx.catalog.get(db, name)
    const stage = coll ? plan(coll, filter as Doc, parseSort(inner.sort), inner.hint).stage : 'EOF'
    return {
      queryPlanner: {
        namespace: `${db}.${name}`,
        winningPlan: planShape(stage, coll?.index(stage.slice(7))?.spec.key),
      },
      ok: 1,
    }
  },
}

function planShape(stage: string, keyPattern: Doc | undefined): Doc {
  if (!stage.startsWith('IXSCAN ')) return { stage }
  return { stage: 'FETCH', inputStage: { stage: 'IXSCAN', indexName: stage.slice(7), keyPattern } }
}

function explainAggregate(ns: string): Doc {
  return { explainVersion: '1', stages: [], queryPlanner: { namespace: ns }, ok: 1 }
}
