import { UUID } from 'bson'
import { decode, type Doc } from '../bson/codec.ts'
import { mongoError } from '../errors.ts'
import { formatValue } from './format.ts'
import type { IndexSpec } from './index-spec.ts'
import { encodeKey } from './key-encoding.ts'
import { SecondaryIndex, type IndexKey } from './secondary-index.ts'

/** What a collection tells the outside world (log, change streams) about each change. */
export interface MutationSink {
  inserted(coll: Collection, raw: Buffer, doc: Doc): void
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
  readonly docs = new Map<string, Buffer>()
  indexes: SecondaryIndex[] = []
  dataBytes = 0

  constructor(
    public db: string,
    public name: string,
    private readonly sink: MutationSink,
    readonly uuid: UUID = new UUID(),
    readonly options: Doc = {},
  ) {}

  get ns(): string {
    return `${this.db}.${this.name}`
  }

  get size(): number {
    return this.docs.size
  }

  get(idKey: string): Doc | undefined {
    const raw = this.docs.get(idKey)
    return raw ? decode(raw) : undefined
  }

  index(name: string): SecondaryIndex | undefined {
    return this.indexes.find((ix) => ix.name === name)
  }

  private keysFor(doc: Doc): IndexKey[][] {
    return this.indexes.map((ix) => ix.keysOf(doc))
  }

  private checkUnique(id: string, keys: IndexKey[][]): void {
    this.indexes.forEach((ix, i) => {
      const error = ix.duplicateError(id, keys[i])
      if (error) throw error
    })
  }

  duplicateIdError(id: unknown): Error {
    return mongoError('DuplicateKey', `E11000 duplicate key error collection: ${this.ns} index: _id_ dup key: { _id: ${formatValue(id)} }`, {
      keyPattern: { _id: 1 },
      keyValue: { _id: id },
    })
  }

  insert(raw: Buffer, doc: Doc): void {
    const id = encodeKey(doc._id)
    if (this.docs.has(id)) throw this.duplicateIdError(doc._id)
    const keys = this.keysFor(doc)
    this.checkUnique(id, keys)
    this.indexes.forEach((ix, i) => ix.add(id, keys[i]))
    this.docs.set(id, raw)
    this.dataBytes += raw.length
    this.sink.inserted(this, raw, doc)
  }

  /** Replaces the stored version of `before` (same _id) by `after`. */
  replace(before: Doc, after: Doc, raw: Buffer, kind: 'update' | 'replace'): void {
    const id = encodeKey(before._id)
    const old = this.docs.get(id)
    if (!old) throw mongoError('InternalError', `document ${formatValue(before._id)} vanished during an update`)
    const oldKeys = this.keysFor(before)
    const newKeys = this.keysFor(after)
    this.checkUnique(id, newKeys)
    this.indexes.forEach((ix, i) => {
      ix.remove(id, oldKeys[i])
      ix.add(id, newKeys[i])
    })
    this.docs.set(id, raw)
    this.dataBytes += raw.length - old.length
    this.sink.replaced(this, before, raw, after, kind)
  }

  remove(doc: Doc): void {
    const id = encodeKey(doc._id)
    const old = this.docs.get(id)
    if (!old) return
    const keys = this.keysFor(doc)
    this.indexes.forEach((ix, i) => ix.remove(id, keys[i]))
    this.docs.delete(id)
    this.dataBytes -= old.length
    this.sink.deleted(this, doc)
  }

  /** Adds an index, building it from the current documents (fails, changing nothing, on duplicates). */
  addIndex(spec: IndexSpec): void {
    const index = new SecondaryIndex(spec, this.ns)
    index.rebuild(this.decodedDocs())
    this.indexes.push(index)
  }

  dropIndex(name: string): void {
    this.indexes = this.indexes.filter((ix) => ix.name !== name)
  }

  *decodedDocs(): Generator<[string, Doc]> {
    for (const [id, raw] of this.docs) yield [id, decode(raw)]
  }

  /** Recovery: stores a document without index maintenance (indexes are rebuilt once at the end). */
  load(raw: Buffer, idKey: string): void {
    const old = this.docs.get(idKey)
    if (old) this.dataBytes -= old.length
    this.docs.set(idKey, raw)
    this.dataBytes += raw.length
  }

  unload(idKey: string): void {
    const old = this.docs.get(idKey)
    if (!old) return
    this.docs.delete(idKey)
    this.dataBytes -= old.length
  }

  /** Rebuilds every index in one pass over the documents (each decoded once). */
  rebuildIndexes(): void {
    if (this.indexes.length === 0) return
    const builds = this.indexes.map((ix) => ix.startBuild())
    for (const [id, doc] of this.decodedDocs()) for (const build of builds) build.feed(id, doc)
    this.indexes.forEach((ix, i) => ix.finishBuild(builds[i]))
  }

  renamed(db: string, name: string): void {
    this.db = db
    this.name = name
    this.indexes = this.indexes.map((ix) => ix.rename(this.ns))
  }
}
