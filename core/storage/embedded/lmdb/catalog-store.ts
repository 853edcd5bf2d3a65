import type { UUID } from 'bson'
import { decode, encode, type Doc } from '../bson/codec.ts'
import type { Catalog, CatalogListener } from '../engine/catalog.ts'
import type { Collection } from '../engine/collection.ts'
import type { CollectionStorage, StorageBackend } from '../engine/doc-store.ts'
import type { IndexSpec } from '../engine/index-spec.ts'
import { SecondaryIndex } from '../engine/secondary-index.ts'
import { SILENT } from '../persistence/journal.ts'
import { fromBytes, joinBytes } from './byte-keys.ts'
import { LmdbDocStore } from './doc-store.ts'
import { walk, type LmdbStores } from './environment.ts'
import { LmdbEntries } from './index-entries.ts'

const NEXT_PREFIX = Buffer.from('next', 'latin1')
/** Counts the changes of the catalog records: a reader thread reloads its catalog when it moves. */
const CATALOG_VERSION = Buffer.from('catalog-version', 'latin1')

/** The catalog records' version as of the caller's read transaction (0 before the first change). */
export function catalogVersion(meta: LmdbStores['meta']): number {
  return meta.getBinary(CATALOG_VERSION)?.readDoubleBE(0) ?? 0
}
const COLL = 'coll/'

function collKey(ns: string): Buffer {
  return joinBytes(Buffer.from(COLL, 'latin1'), ns)
}

interface CollectionRecord {
  uuid: UUID
  options: Doc
  prefix: number
  /** `building`: the index is being built, scanned up to this record number (resumed at start). */
  indexes: Array<{ spec: IndexSpec; prefix: number; multikey: boolean; building?: number }>
}

/** Hands out the u32 prefixes of new collections and indexes (persisted in the same transaction). */
export class LmdbBackend implements StorageBackend {
  constructor(private readonly env: LmdbStores) {}

  private allocate(): number {
    const stored = this.env.meta.getBinary(NEXT_PREFIX)
    // Two per allocation: a store's range is [prefix, prefix + 1), and prefix + 1 is never a key.
    const next = stored ? stored.readUInt32BE(0) : 2
    const b = Buffer.allocUnsafe(4)
    b.writeUInt32BE(next + 2)
    this.env.meta.putSync(NEXT_PREFIX, b)
    return next
  }

  newCollection(): CollectionStorage {
    return this.storage(new LmdbDocStore(this.env, this.allocate()))
  }

  storage(docs: LmdbDocStore): CollectionStorage {
    return { docs, newIndexEntries: (unique) => new LmdbEntries(this.env, this.allocate(), unique) }
  }
}

const prefixOf = (coll: Collection) => (coll.storage.docs as LmdbDocStore).prefix

/**
 * Keeps the catalog records in lmdb in step with the catalog: each collection's options, uuid,
 * storage prefix and indexes (spec, prefix, multikey). Documents and index entries are written by
 * the stores themselves; this records what names them.
 */
export class LmdbCatalogRecorder implements CatalogListener {
  private readonly open = new Map<string, Collection>()
  private readonly multikey = new Map<string, string>()

  constructor(private readonly env: LmdbStores) {}

  /** In the same transaction as the records' change, so a reader sees both or neither. */
  private bump(): void {
    const b = Buffer.allocUnsafe(8)
    b.writeDoubleBE(catalogVersion(this.env.meta) + 1)
    this.env.meta.putSync(CATALOG_VERSION, b)
  }

  private write(coll: Collection): void {
    this.bump()
    const record: CollectionRecord = {
      uuid: coll.uuid,
      options: coll.options,
      prefix: prefixOf(coll),
      indexes: coll.indexes.map((ix) => ({
        spec: ix.spec,
        prefix: (ix.entries as LmdbEntries).prefix,
        multikey: ix.multikey,
        ...(ix.building ? { building: ix.building.position } : {}),
      })),
    }
    this.env.meta.putSync(collKey(coll.ns), encode(record as unknown as Doc))
    this.open.set(coll.ns, coll)
    this.multikey.set(coll.ns, this.multikeyOf(coll))
  }

  private multikeyOf(coll: Collection): string {
    return coll.indexes.map((ix) => (ix.multikey ? '1' : '0')).join('')
  }

  private forget(ns: string): void {
    const coll = this.open.get(ns)
    if (!coll) return
    this.bump()
    ;(coll.storage.docs as LmdbDocStore).clear()
    for (const ix of coll.indexes) ix.entries.clear()
    this.env.meta.removeSync(collKey(ns))
    this.open.delete(ns)
    this.multikey.delete(ns)
  }

  /** An index turned multikey (the planner must know it after a restart). */
  private noteMultikey(coll: Collection): void {
    if (coll.indexes.length && this.multikey.get(coll.ns) !== this.multikeyOf(coll)) this.write(coll)
  }

  inserted(coll: Collection): void {
    this.noteMultikey(coll)
  }

  replaced(coll: Collection): void {
    this.noteMultikey(coll)
  }

  deleted(): void {}

  collectionCreated(coll: Collection): void {
    this.write(coll)
  }

  collectionDropped(db: string, name: string): void {
    this.forget(`${db}.${name}`)
  }

  indexCreated(coll: Collection): void {
    this.write(coll)
  }

  indexDropped(coll: Collection): void {
    this.write(coll)
  }

  /** Written in the transaction of the build's chunk: the position always matches the entries. */
  indexBuildProgress(coll: Collection): void {
    this.write(coll)
  }

  databaseDropped(db: string): void {
    for (const ns of [...this.open.keys()]) if (ns.startsWith(`${db}.`)) this.forget(ns)
  }

  collectionRenamed(fromDb: string, fromName: string, coll: Collection): void {
    const from = `${fromDb}.${fromName}`
    this.bump()
    this.env.meta.removeSync(collKey(from))
    this.open.delete(from)
    this.multikey.delete(from)
    this.write(coll)
  }

  /**
   * Opens every recorded collection into `catalog` (nothing is read but the records); `live`:
   * their counters are read at each use (a reader thread's catalog).
   */
  load(catalog: Catalog, backend: LmdbBackend, live = false): number {
    catalog.setListener(SILENT)
    let count = 0
    const lo = Buffer.from(COLL, 'latin1')
    for (const { key, value } of walk(this.env.meta, lo, Buffer.concat([lo, Buffer.from([0xff])]), false)) {
      const ns = fromBytes(key, lo.length)
      const dot = ns.indexOf('.')
      const record = decode(value) as unknown as CollectionRecord
      const storage = backend.storage(new LmdbDocStore(this.env, record.prefix, live))
      const coll = catalog.create(ns.slice(0, dot), ns.slice(dot + 1), record.options ?? {}, record.uuid, storage)
      for (const ix of record.indexes) {
        const index = new SecondaryIndex(
          ix.spec,
          coll.ns,
          new LmdbEntries(this.env, ix.prefix, Boolean(ix.spec.unique)),
        )
        index.multikey = ix.multikey
        if (ix.building !== undefined) index.building = { position: ix.building }
        coll.indexes.push(index)
      }
      this.open.set(coll.ns, coll)
      this.multikey.set(coll.ns, this.multikeyOf(coll))
      count += 1
    }
    return count
  }
}
