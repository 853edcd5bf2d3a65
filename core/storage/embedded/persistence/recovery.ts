import { statSync } from 'node:fs'
import { ObjectId, UUID } from 'bson'
import { decode } from '../bson/codec.ts'
import { assemble, elementsOf } from '../bson/raw.ts'
import type { Catalog } from '../engine/catalog.ts'
import type { IndexSpec } from '../engine/index-spec.ts'
import { encodeKey } from '../engine/key-encoding.ts'
import { SecondaryIndex } from '../engine/secondary-index.ts'
import type { DataDir } from './data-dir.ts'
import { readRecordFile, RecordOp, type LogRecord } from './records.ts'

function splitNs(ns: string): [string, string] {
  const dot = ns.indexOf('.')
  return [ns.slice(0, dot), ns.slice(dot + 1)]
}

const OID_ELEMENT = [0x07, 0x5f, 0x69, 0x64, 0x00]

/** The encoded _id of a stored document (always its first element), decoding nothing else. */
function idKeyOf(raw: Uint8Array): string {
  if (OID_ELEMENT.every((byte, i) => raw[4 + i] === byte)) return encodeKey(new ObjectId(raw.subarray(9, 21)))
  const [first] = elementsOf(raw)
  return encodeKey(decode(assemble([raw.subarray(first.start, first.end)]))._id)
}

/** Applies one record to the catalog (whose listener is silent during recovery). */
function apply(catalog: Catalog, record: LogRecord): void {
  if (record.op === RecordOp.dropDatabase) {
    catalog.dropDatabase(record.ns)
    return
  }
  if (record.op === RecordOp.end) return
  const [db, name] = splitNs(record.ns)
  switch (record.op) {
    case RecordOp.put:
      catalog.ensure(db, name).load(Buffer.from(record.body), idKeyOf(record.body))
      return
    case RecordOp.delete:
      catalog.get(db, name)?.unload(encodeKey(decode(record.body)._id))
      return
    case RecordOp.createCollection: {
      if (catalog.get(db, name)) return
      const body = decode(record.body)
      catalog.create(
        db,
        name,
        (body.options ?? {}) as Record<string, unknown>,
        body.uuid instanceof UUID ? body.uuid : undefined,
      )
      return
    }
    case RecordOp.dropCollection:
      catalog.drop(db, name)
      return
    case RecordOp.createIndex: {
      const coll = catalog.ensure(db, name)
      const spec = decode(record.body) as unknown as IndexSpec
      coll.dropIndex(spec.name)
      coll.indexes.push(new SecondaryIndex(spec, coll.ns))
      return
    }
    case RecordOp.dropIndex:
      catalog.get(db, name)?.dropIndex(String(decode(record.body).name))
      return
    case RecordOp.rename: {
      const [toDb, toName] = splitNs(String(decode(record.body).to))
      if (catalog.get(db, name)) catalog.rename(db, name, toDb, toName, true)
      return
    }
    default:
      throw new Error(`unknown log record type ${record.op} in the data folder`)
  }
}

export interface RecoveryResult {
  /** Generation of the log to append to. */
  gen: number
  /** Length of that log's valid prefix (a torn tail after it is cut off). */
  validLength: number
  records: number
  logBytes: number
}

/**
 * Rebuilds the catalog from the newest complete snapshot and the logs written after it, then
 * builds every index once. A torn record at the end of the newest log (the crash happened while
 * writing it, so it was never acknowledged) is dropped; corruption anywhere else is an error.
 */
export function recover(catalog: Catalog, dir: DataDir): RecoveryResult {
  dir.removeTemporaries()
  const snapshots = dir.snapshots()
  const base = snapshots.length ? snapshots[snapshots.length - 1] : 0
  let records = 0
  if (snapshots.length) {
    let complete = false
    readRecordFile(dir.snapshotPath(base), (r) => {
      records += 1
      if (r.op === RecordOp.end) complete = true
      else apply(catalog, r)
    })
    if (!complete) throw new Error(`snapshot ${dir.snapshotPath(base)} is incomplete or corrupt`)
  }
  const wals = dir.wals().filter((g) => g >= base)
  let validLength = 0
  let logBytes = 0
  wals.forEach((gen, i) => {
    validLength = readRecordFile(dir.walPath(gen), (r) => {
      records += 1
      apply(catalog, r)
    })
    logBytes += validLength
    if (i < wals.length - 1 && validLength < fileSize(dir.walPath(gen))) {
      throw new Error(`log ${dir.walPath(gen)} is corrupt at byte ${validLength} but is not the newest log`)
    }
  })
  for (const coll of catalog.all()) coll.rebuildIndexes()
  const gen = wals.length ? wals[wals.length - 1] : base
  return { gen, validLength: wals.length ? validLength : 0, records, logBytes }
}

function fileSize(path: string): number {
  return statSync(path).size
}
