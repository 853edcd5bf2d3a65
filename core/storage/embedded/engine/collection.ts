import { UUID } from 'bson'
import { decode, type Doc } from '../bson/codec.ts'
import { fieldPicker, scalarFieldReader } from '../bson/raw.ts'
import { mongoError } from '../errors.ts'
import { formatValue } from './format.ts'
import { MEMORY_BACKEND, MemoryDocStore, type CollectionStorage, type DocStore } from './doc-store.ts'
import type { IndexSpec } from './index-spec.ts'
import { encodeKey } from './key-encoding.ts'
import { SecondaryIndex, type BuildState, type IndexKey } from './secondary-index.ts'

/** What a collection tells the outside world (log, change streams) about each change. */
export interface MutationSink {
  inserted(coll: Collection, raw: Uint8Array): void
  replaced(coll: Collection, before: Doc, raw: Buffer, after: Doc, kind: 'update' | 'replace'): void
  deleted(coll: Collection, doc: Doc): void
}

export const ID_INDEX: IndexSpec = { v: 2, key: { _id: 1 }, name: '_id_' }

/**
 * One collection: documents as raw BSON keyed by their encoded _id (insertion order is natural
 * order), and its secondary indexes. Every mutation keeps all indexes and the sink in step, and
 * checks every unique index before touching anything, so a failed write changes nothing.
 */
export class Collection {
  private readonly docs: DocStore
  indexes: SecondaryIndex[] = []
  /** indexedFields' reader, made for the indexes as they were (the array and its length). */
  private picker: { for: SecondaryIndex[]; count: number; pick: (raw: Uint8Array) => Doc } | undefined

  constructor(
    public db: string,
    public name: string,
    private readonly sink: MutationSink,
    readonly uuid: UUID = new UUID(),
    readonly options: Doc = {},
    readonly storage: CollectionStorage = MEMORY_BACKEND.newCollection(),
  ) {
    this.docs = storage.docs
  }

  get ns(): string {
    return `${this.db}.${this.name}`
  }

  get size(): number {
    return this.docs.size
  }

  /** Bytes of all stored documents. */
  get dataBytes(): number {
    return this.docs.dataBytes
  }

  has(idKey: string): boolean {
    return this.docs.has(idKey)
  }

  /** The stored bytes of a document (a view: do not keep it across writes). */
  raw(idKey: string): Buffer | undefined {
    return this.docs.raw(idKey)
  }

  get(idKey: string): Doc | undefined {
    const raw = this.raw(idKey)
    return raw ? decode(raw) : undefined
  }

  ids(reverse = false): Iterable<string> {
    return this.docs.ids(reverse)
  }

  entries(): Iterable<[string, Buffer]> {
    return this.docs.entries()
  }

  /** A consistent image of the documents' bytes, unaffected by later writes (for snapshots). */
  image(): Buffer[] {
    if (this.docs instanceof MemoryDocStore) return this.docs.image()
    return [...this.docs.entries()].map(([, raw]) => raw)
  }

  index(name: string): SecondaryIndex | undefined {
    return this.indexes.find((ix) => ix.name === name)
  }

  /** Indexes that queries may use (not being built). */
  get readyIndexes(): SecondaryIndex[] {
    return this.indexes.filter((ix) => !ix.building)
  }

  /** Whether an index is being built (renaming the collection is refused meanwhile). */
  get building(): boolean {
    return this.indexes.some((ix) => ix.building)
  }

  /**
   * What an insert reads of a new document: its _id and the top-level fields the indexes read,
   * decoded from its bytes (the whole document when a partial index's filter may read anything).
   */
  indexedFields(raw: Uint8Array): Doc {
    const picker = this.picker
    if (picker?.for === this.indexes && picker.count === this.indexes.length) return picker.pick(raw)
    const fields = new Set(['_id', ...this.indexes.flatMap((ix) => ix.topLevelFields)])
    const whole = this.indexes.some((ix) => ix.spec.partialFilterExpression) || fields.has('__proto__')
    const pickFields = fieldPicker(fields)
    const readScalars = scalarFieldReader(fields)
    const pick = whole ? decode : (bytes: Uint8Array) => readScalars(bytes) ?? decode(pickFields(bytes))
    this.picker = { for: this.indexes, count: this.indexes.length, pick }
    return pick(raw)
  }

  private keysFor(doc: Doc): IndexKey[][] {
    return this.indexes.map((ix) => (ix.maintained ? ix.keysOf(doc) : []))
  }

  /**
   * Throws, changing nothing, if the keys of the indexes `changed` picks cannot be stored or
   * duplicate another document's in a ready index. A duplicate in a unique index being built does
   * not fail the write (as in MongoDB): it fails the build, once the write is known to go ahead.
   */
  private checkUnique(id: string, keys: IndexKey[][], changed: (i: number) => boolean = () => true): void {
    const failedBuilds: Array<[SecondaryIndex, Error]> = []
    this.indexes.forEach((ix, i) => {
      if (!changed(i)) return
      ix.checkKeys(id, keys[i])
      const error = ix.duplicateError(id, keys[i])
      if (error && ix.building) failedBuilds.push([ix, error])
      else if (error) throw error
    })
    for (const [ix, error] of failedBuilds) {
      ;(ix.building as BuildState).failure ??= error
      keys[this.indexes.indexOf(ix)] = []
    }
  }

  duplicateIdError(id: unknown): Error {
    return mongoError(
      'DuplicateKey',
      `E11000 duplicate key error collection: ${this.ns} index: _id_ dup key: { _id: ${formatValue(id)} }`,
      {
        keyPattern: { _id: 1 },
        keyValue: { _id: id },
      },
    )
  }

  /**
   * Stores a new document. The stores' own inserts are the duplicate checks (on disk, one B-tree
   * descent each instead of a read and then a write): one that finds its key taken writes nothing,
   * and what this insert wrote before it is taken back, so a failed insert changes nothing.
   * `doc` is the document decoded, or at least its indexedFields.
   */
  insert(raw: Uint8Array, doc: Doc): void {
    const id = encodeKey(doc._id)
    this.docs.check(id)
    if (!this.docs.insert(id, raw)) throw this.duplicateIdError(doc._id)
    const indexes = this.indexes
    // the indexes before this one hold the document's keys (claimed in order)
    let claimed = 0
    let failedBuilds: Array<[SecondaryIndex, Error]> | undefined
    let keys: IndexKey[][] = []
    try {
      keys = this.keysFor(doc)
      for (let i = 0; i < indexes.length; i++) indexes[i].checkKeys(id, keys[i])
      for (; claimed < indexes.length; claimed++) {
        const ix = indexes[claimed]
        const taken = ix.claim(id, keys[claimed])
        if (taken && ix.building) {
          // fails the build, not the write (as checkUnique), once the write is known to go ahead
          ;(failedBuilds ??= []).push([ix, ix.duplicate(taken.values)])
          keys[claimed] = []
        } else if (taken) throw ix.duplicate(taken.values)
      }
    } catch (error) {
      for (let i = 0; i < claimed; i++) indexes[i].remove(id, keys[i])
      this.docs.delete(id)
      throw error
    }
    for (const [ix, error] of failedBuilds ?? []) (ix.building as BuildState).failure ??= error
    this.sink.inserted(this, raw)
  }

  /** Replaces the stored version of `before` (same _id) by `after`. */
  replace(before: Doc, after: Doc, raw: Buffer, kind: 'update' | 'replace'): void {
    const id = encodeKey(before._id)
    if (!this.docs.has(id))
      throw mongoError('InternalError', `document ${formatValue(before._id)} vanished during an update`)
    const oldKeys = this.keysFor(before)
    const newKeys = this.keysFor(after)
    // an update rarely touches indexed fields: an index whose keys stay holds them for this very
    // document already (nothing to check, a read saved on disk), and rewriting them would cost an
    // on-disk store a page
    const changed = (i: number) => !sameKeys(oldKeys[i], newKeys[i])
    this.checkUnique(id, newKeys, changed)
    this.indexes.forEach((ix, i) => {
      if (!changed(i)) return
      ix.remove(id, oldKeys[i])
      ix.add(id, newKeys[i])
    })
    this.docs.put(id, raw)
    this.sink.replaced(this, before, raw, after, kind)
  }

  remove(doc: Doc): void {
    const id = encodeKey(doc._id)
    if (!this.docs.has(id)) return
    const keys = this.keysFor(doc)
    this.indexes.forEach((ix, i) => ix.remove(id, keys[i]))
    this.docs.delete(id)
    this.sink.deleted(this, doc)
  }

  /** Adds an index, building it from the current documents (fails, changing nothing, on duplicates). */
  addIndex(spec: IndexSpec): void {
    const index = new SecondaryIndex(spec, this.ns, this.storage.newIndexEntries(Boolean(spec.unique)))
    index.rebuild(this.decodedDocs())
    this.indexes.push(index)
  }

  /** Adds an empty index that writes maintain from now on, to be built by scanning (index-builds.ts). */
  addBuildingIndex(spec: IndexSpec): SecondaryIndex {
    const index = new SecondaryIndex(spec, this.ns, this.storage.newIndexEntries(Boolean(spec.unique)))
    index.building = { position: 0 }
    this.indexes.push(index)
    return index
  }

  /** The documents after `position` in natural order, each with its position (index builds). */
  scan(position: number): Iterable<{ id: string; position: number }> {
    return this.docs.scan(position)
  }

  /** New options for an existing index (same key): the entries stay as they are. */
  replaceIndexSpec(spec: IndexSpec): void {
    this.indexes = this.indexes.map((ix) => (ix.name === spec.name ? ix.withSpec(spec) : ix))
  }

  dropIndex(name: string): void {
    this.indexes.find((ix) => ix.name === name)?.entries.clear()
    this.indexes = this.indexes.filter((ix) => ix.name !== name)
  }

  *decodedDocs(): Generator<[string, Doc]> {
    for (const [id, raw] of this.entries()) yield [id, decode(raw)]
  }

  /** Recovery: stores a document without index maintenance (indexes are rebuilt once at the end). */
  load(raw: Uint8Array, idKey: string): void {
    this.docs.put(idKey, raw)
  }

  unload(idKey: string): void {
    this.docs.delete(idKey)
  }

  /**
   * Rebuilds every index in one pass over the documents, decoding of each only the top-level
   * fields the indexes read (all of it when a partial filter may read anything).
   */
  rebuildIndexes(): void {
    if (this.indexes.length === 0) return
    const builds = this.indexes.map((ix) => ix.startBuild())
    const partial = this.indexes.some((ix) => ix.spec.partialFilterExpression)
    const pick = fieldPicker(new Set(this.indexes.flatMap((ix) => ix.topLevelFields)))
    for (const [id, raw] of this.entries()) {
      const doc = decode(partial ? raw : pick(raw))
      for (const build of builds) build.feed(id, doc)
    }
    this.indexes.forEach((ix, i) => ix.finishBuild(builds[i]))
  }

  renamed(db: string, name: string): void {
    this.db = db
    this.name = name
    this.indexes = this.indexes.map((ix) => ix.rename(this.ns))
  }
}

function sameKeys(a: IndexKey[], b: IndexKey[]): boolean {
  return a.length === b.length && a.every((k, i) => k.key === b[i].key)
}
