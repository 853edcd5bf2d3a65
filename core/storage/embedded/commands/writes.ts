import { isPlainObject, type Doc } from '../bson/codec.ts'
import { rawField } from '../bson/raw.ts'
import { parseSort } from '../engine/planner.ts'
import { parseUpdate } from '../engine/update-parse.ts'
import { executeDelete, executeUpdate, insertDocument, type UpdateStatement } from '../engine/writes.ts'
import { makeProjector, projectRaw } from '../engine/find-exec.ts'
import { mongoError, notSupported, toMongoError, type MongoServerError } from '../errors.ts'
import { collectionOf, dbOf, optionalDoc, rawItemsOf, type CommandHandler } from './context.ts'
import { replyWithRawValue } from '../wire/cursor-reply.ts'

/** Runs each statement; ordered writes stop at the first error, unordered ones go on. */
function eachStatement<T>(items: T[], ordered: boolean, run: (item: T, index: number) => void): MongoServerError[] {
  const errors: MongoServerError[] = []
  for (let i = 0; i < items.length; i++) {
    try {
      run(items[i], i)
    } catch (error) {
      const e = toMongoError(error)
      ;(e as MongoServerError & { index?: number }).index = i
      errors.push(e)
      if (ordered) break
    }
  }
  return errors
}

function writeErrors(errors: MongoServerError[]): Doc {
  if (errors.length === 0) return {}
  return { writeErrors: errors.map((e) => e.toWriteError((e as MongoServerError & { index?: number }).index ?? 0)) }
}

function checkBatchSize(length: number): void {
  if (length > 100_000)
    throw mongoError('InvalidLength', `Write batch sizes must be between 1 and 100000. Got ${length} operations.`)
}

function statements(cmd: { body: Doc }, field: string): Doc[] {
  const list = cmd.body[field]
  if (!Array.isArray(list)) throw mongoError('TypeMismatch', `BSON field '${field}' is missing or is not an array`)
  checkBatchSize(list.length)
  return list.map((item) => {
    if (!isPlainObject(item)) throw mongoError('TypeMismatch', `BSON field '${field}' must be an array of objects`)
    return item
  })
}

export function updateStatement(spec: Doc, raw: Uint8Array | undefined): UpdateStatement {
  const filter = spec.q ?? {}
  if (!isPlainObject(filter))
    throw mongoError('TypeMismatch', "BSON field 'update.updates.q' is the wrong type, expected type 'object'")
  if (spec.collation !== undefined) throw notSupported('collation')
  const parsed = parseUpdate(spec.u, spec.arrayFilters)
  return {
    filter,
    parsed,
    rawUpdate: raw ? rawField(raw, 'u') : undefined,
    multi: spec.multi === true,
    upsert: spec.upsert === true,
    hint: spec.hint,
  }
}

export const writeCommands: Record<string, CommandHandler> = {
  insert: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'insert')
    // a document sequence (what drivers send) holds documents only, left undecoded (wire/messages.ts)
    const sequence = cmd.sequences.get('documents')
    if (sequence) checkBatchSize(sequence.length)
    else statements(cmd, 'documents')
    const raws = rawItemsOf(cmd, 'documents')
    const coll = ctx.catalog.ensure(db, name)
    let n = 0
    const errors = eachStatement(raws, cmd.body.ordered !== false, (raw) => {
      insertDocument(coll, raw)
      n += 1
    })
    return { n, ...writeErrors(errors), ok: 1 }
  },
  update: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'update')
    const specs = statements(cmd, 'updates')
    const raws = rawItemsOf(cmd, 'updates')
    let n = 0
    let nModified = 0
    const upserted: Doc[] = []
    const errors = eachStatement(specs, cmd.body.ordered !== false, (spec, i) => {
      const result = executeUpdate(ctx.catalog, db, name, updateStatement(spec, raws[i]))
      if (result.upsertedId !== undefined) {
        upserted.push({ index: i, _id: result.upsertedId })
        n += 1
      } else {
        n += result.matched
        nModified += result.modified
      }
    })
    return { n, nModified, ...(upserted.length > 0 ? { upserted } : {}), ...writeErrors(errors), ok: 1 }
  },
  delete: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'delete')
    const specs = statements(cmd, 'deletes')
    let n = 0
    const errors = eachStatement(specs, cmd.body.ordered !== false, (spec) => {
      if (spec.limit !== 0 && spec.limit !== 1)
        throw mongoError('FailedToParse', `The limit field in delete objects must be 0 or 1. Got ${String(spec.limit)}`)
      if (spec.collation !== undefined) throw notSupported('collation')
      const filter = spec.q ?? {}
      if (!isPlainObject(filter))
        throw mongoError('TypeMismatch', "BSON field 'delete.deletes.q' is the wrong type, expected type 'object'")
      n += executeDelete(ctx.catalog, db, name, filter, spec.limit === 0, undefined, spec.hint).length
    })
    return { n, ...writeErrors(errors), ok: 1 }
  },
  findAndModify: (cmd, ctx) => {
    const db = dbOf(cmd)
    const name = collectionOf(cmd, 'findAndModify')
    const body = cmd.body
    if (body.collation !== undefined) throw notSupported('collation')
    const filter = optionalDoc(body, 'query') ?? {}
    const sort = parseSort(optionalDoc(body, 'sort'))
    const project = makeProjector(optionalDoc(body, 'fields'))
    const shown = (raw: Buffer | undefined, doc: Doc | undefined) =>
      raw && doc ? (project ? projectRaw(project, raw) : raw) : null
    if (body.remove === true) {
      if (body.update !== undefined) throw mongoError('FailedToParse', 'Cannot specify both an update and remove=true')
      if (body.new === true)
        throw mongoError(
          'FailedToParse',
          "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document",
        )
      const [removed] = executeDelete(ctx.catalog, db, name, filter, false, sort, body.hint)
      return replyWithRawValue({ lastErrorObject: { n: removed ? 1 : 0 } }, shown(removed?.raw, removed?.doc))
    }
    if (body.update === undefined)
      throw mongoError('FailedToParse', 'Either an update or remove=true must be specified')
    const result = executeUpdate(ctx.catalog, db, name, {
      filter,
      parsed: parseUpdate(body.update, body.arrayFilters),
      rawUpdate: Array.isArray(body.update) ? undefined : rawField(cmd.raw, 'update'),
      multi: false,
      upsert: body.upsert === true,
      sort,
      hint: body.hint,
    })
    const lastErrorObject: Doc = {
      n: result.upsertedId !== undefined ? 1 : result.matched,
      updatedExisting: result.matched > 0,
      ...(result.upsertedId !== undefined ? { upserted: result.upsertedId } : {}),
    }
    const first = result.first
    const value = body.new === true ? shown(first?.afterRaw, first?.after) : shown(first?.beforeRaw, first?.before)
    return replyWithRawValue({ lastErrorObject }, value)
  },
}
