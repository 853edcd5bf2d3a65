import { encode, type Doc } from '../bson/codec.ts'
import type { CatalogListener } from '../engine/catalog.ts'
import type { Collection } from '../engine/collection.ts'
import type { IndexSpec } from '../engine/index-spec.ts'
import type { LogWriter } from './log-writer.ts'
import { encodeRecord, RecordOp } from './records.ts'

/** Turns every catalog change into a log record on the current log file. */
export class Journal implements CatalogListener {
  constructor(private writer: LogWriter) {}

  get current(): LogWriter {
    return this.writer
  }

  /** Continues on a new file (compaction starts one where the snapshot ends). */
  switchTo(writer: LogWriter): void {
    this.writer.flush()
    this.writer = writer
  }

  inserted(coll: Collection, raw: Uint8Array): void {
    this.writer.append(encodeRecord(RecordOp.put, coll.ns, raw))
  }

  replaced(coll: Collection, _before: Doc, raw: Buffer): void {
    this.writer.append(encodeRecord(RecordOp.put, coll.ns, raw))
  }

  deleted(coll: Collection, doc: Doc): void {
    this.writer.append(encodeRecord(RecordOp.delete, coll.ns, encode({ _id: doc._id })))
  }

  collectionCreated(coll: Collection): void {
    this.writer.append(
      encodeRecord(RecordOp.createCollection, coll.ns, encode({ uuid: coll.uuid, options: coll.options })),
    )
  }

  collectionDropped(db: string, name: string): void {
    this.writer.append(encodeRecord(RecordOp.dropCollection, `${db}.${name}`))
  }

  /** An index being built is logged once complete: after a crash mid-build it is absent. */
  indexCreated(coll: Collection, spec: IndexSpec): void {
    if (coll.index(spec.name)?.building) return
    this.writer.append(encodeRecord(RecordOp.createIndex, coll.ns, encode({ ...spec })))
  }

  indexDropped(coll: Collection, name: string): void {
    this.writer.append(encodeRecord(RecordOp.dropIndex, coll.ns, encode({ name })))
  }

  databaseDropped(db: string): void {
    this.writer.append(encodeRecord(RecordOp.dropDatabase, db))
  }

  collectionRenamed(fromDb: string, fromName: string, coll: Collection): void {
    this.writer.append(encodeRecord(RecordOp.rename, `${fromDb}.${fromName}`, encode({ to: coll.ns })))
  }
}

/** A listener that records nothing (recovery replays with it). */
export const SILENT: CatalogListener = {
  inserted: () => undefined,
  replaced: () => undefined,
  deleted: () => undefined,
  collectionCreated: () => undefined,
  collectionDropped: () => undefined,
  indexCreated: () => undefined,
  indexDropped: () => undefined,
  databaseDropped: () => undefined,
  collectionRenamed: () => undefined,
}

/** Several listeners as one, called in order. */
export function fanOut(listeners: CatalogListener[]): CatalogListener {
  type Required = globalThis.Required<CatalogListener>
  const all = <K extends keyof Required>(key: K) =>
    ((...args: Parameters<Required[K]>) => {
      for (const l of listeners) (l[key] as ((...a: Parameters<Required[K]>) => void) | undefined)?.(...args)
    }) as Required[K]
  return {
    inserted: all('inserted'),
    replaced: all('replaced'),
    deleted: all('deleted'),
    collectionCreated: all('collectionCreated'),
    collectionDropped: all('collectionDropped'),
    indexCreated: all('indexCreated'),
    indexDropped: all('indexDropped'),
    indexBuildProgress: all('indexBuildProgress'),
    databaseDropped: all('databaseDropped'),
    collectionRenamed: all('collectionRenamed'),
  }
}
