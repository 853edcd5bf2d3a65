import type { UUID } from 'bson'
import type { Doc } from '../bson/codec.ts'
import { mongoError } from '../errors.ts'
import { Collection, type MutationSink } from './collection.ts'
import type { IndexSpec } from './index-spec.ts'
import type { SecondaryIndex } from './secondary-index.ts'
import { MEMORY_BACKEND, type CollectionStorage, type StorageBackend } from './doc-store.ts'

/** Everything that must follow the catalog: the write-ahead log, change streams. */
export interface CatalogListener extends MutationSink {
  collectionCreated(coll: Collection): void
  collectionDropped(db: string, name: string): void
  /** Also called when a build registers an index (its `building` set) and when the build completes. */
  indexCreated(coll: Collection, spec: IndexSpec): void
  /** A build scanned further (an on-disk store records where it is, to resume after a restart). */
  indexBuildProgress?(coll: Collection): void
  indexDropped(coll: Collection, name: string): void
  databaseDropped(db: string): void
  collectionRenamed(fromDb: string, fromName: string, coll: Collection): void
}

const INVALID_DB_CHARS = /[/\\. "$\u0000]/

export function validateDbName(db: string): void {
  if (db === '' || INVALID_DB_CHARS.test(db) || db.length > 63) {
    throw mongoError('InvalidNamespace', `Invalid database name: '${db}'`)
  }
}

export function validateCollectionName(db: string, name: string): void {
  if (name === '' || name.includes('\u0000') || name.includes('$') || name.startsWith('.')) {
    throw mongoError('InvalidNamespace', `Invalid collection name: ${db}.${name}`)
  }
}

/** Databases and their collections; the listener is told of every change. */
export class Catalog {
  private readonly dbs = new Map<string, Map<string, Collection>>()
  private listener: CatalogListener

  constructor(
    listener: CatalogListener,
    private readonly backend: StorageBackend = MEMORY_BACKEND,
  ) {
    this.listener = listener
  }

  /** Swaps the listener (recovery replays with a silent one, then the log takes over). */
  setListener(listener: CatalogListener): void {
    this.listener = listener
  }

  private readonly sink: MutationSink = {
    inserted: (coll, raw) => this.listener.inserted(coll, raw),
    replaced: (coll, before, raw, after, kind) => this.listener.replaced(coll, before, raw, after, kind),
    deleted: (coll, doc) => this.listener.deleted(coll, doc),
  }

  get(db: string, name: string): Collection | undefined {
    return this.dbs.get(db)?.get(name)
  }

  /** The collection, created implicitly (as MongoDB does on first write or index). */
  ensure(db: string, name: string): Collection {
    return this.get(db, name) ?? this.create(db, name, {})
  }

  /** A new collection; `storage` is given when an on-disk store reopens an existing one. */
  create(db: string, name: string, options: Doc, uuid?: UUID, storage?: CollectionStorage): Collection {
    validateDbName(db)
    validateCollectionName(db, name)
    if (this.get(db, name)) throw mongoError('NamespaceExists', `Collection ${db}.${name} already exists.`)
    const coll = new Collection(db, name, this.sink, uuid, options, storage ?? this.backend.newCollection())
    let colls = this.dbs.get(db)
    if (!colls) this.dbs.set(db, (colls = new Map()))
    colls.set(name, coll)
    this.listener.collectionCreated(coll)
    return coll
  }

  drop(db: string, name: string): Collection | undefined {
    const colls = this.dbs.get(db)
    const coll = colls?.get(name)
    if (!colls || !coll) return undefined
    colls.delete(name)
    if (colls.size === 0) this.dbs.delete(db)
    this.listener.collectionDropped(db, name)
    return coll
  }

  dropDatabase(db: string): boolean {
    const existed = this.dbs.delete(db)
    if (existed) this.listener.databaseDropped(db)
    return existed
  }

  rename(fromDb: string, fromName: string, toDb: string, toName: string, dropTarget: boolean): void {
    const source = this.get(fromDb, fromName)
    if (!source) throw mongoError('NamespaceNotFound', 'Source collection does not exist')
    if (source.building)
      throw mongoError(
        'BackgroundOperationInProgressForNamespace',
        `cannot perform operation: an index build is currently running for collection ${source.ns}`,
      )
    validateDbName(toDb)
    validateCollectionName(toDb, toName)
    if (this.get(toDb, toName)) {
      if (!dropTarget) throw mongoError('NamespaceExists', 'Target namespace exists')
      this.drop(toDb, toName)
    }
    const colls = this.dbs.get(fromDb)
    colls?.delete(fromName)
    if (colls?.size === 0) this.dbs.delete(fromDb)
    source.renamed(toDb, toName)
    let target = this.dbs.get(toDb)
    if (!target) this.dbs.set(toDb, (target = new Map()))
    target.set(toName, source)
    this.listener.collectionRenamed(fromDb, fromName, source)
  }

  createIndex(coll: Collection, spec: IndexSpec): void {
    coll.addIndex(spec)
    this.listener.indexCreated(coll, spec)
  }

  /** Registers an index to be built beside other commands (index-builds.ts); writes maintain it from now on. */
  startIndexBuild(coll: Collection, spec: IndexSpec): SecondaryIndex {
    const index = coll.addBuildingIndex(spec)
    this.listener.indexCreated(coll, spec)
    return index
  }

  indexBuildProgress(coll: Collection): void {
    this.listener.indexBuildProgress?.(coll)
  }

  /** The build scanned every document: the index is ready for queries. */
  finishIndexBuild(coll: Collection, index: SecondaryIndex): void {
    index.building = undefined
    this.listener.indexCreated(coll, index.spec)
  }

  /** Changes options of an index in place (collMod): logged as a drop and a re-create. */
  modifyIndex(coll: Collection, spec: IndexSpec): void {
    coll.replaceIndexSpec(spec)
    this.listener.indexDropped(coll, spec.name)
    this.listener.indexCreated(coll, spec)
  }

  dropIndex(coll: Collection, name: string): void {
    coll.dropIndex(name)
    this.listener.indexDropped(coll, name)
  }

  databases(): string[] {
    return [...this.dbs.keys()]
  }

  collections(db: string): Collection[] {
    return [...(this.dbs.get(db)?.values() ?? [])]
  }

  *all(): Generator<Collection> {
    for (const colls of this.dbs.values()) yield* colls.values()
  }
}
