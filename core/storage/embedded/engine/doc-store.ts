import { Arena, type Handle } from './arena.ts'
import { SortedEntries, type Entry } from './sorted-entries.ts'

/**
 * Where a collection keeps its documents: raw BSON by encoded _id, in natural (insertion) order.
 * The in-memory store below, or an on-disk one (lmdb/doc-store.ts).
 */
export interface DocStore {
  readonly size: number
  /** Bytes of all stored documents. */
  readonly dataBytes: number
  has(idKey: string): boolean
  /** The stored bytes of a document (do not keep a view across writes). */
  raw(idKey: string): Buffer | undefined
  /** Encoded ids in natural order (reversed on request). */
  ids(reverse?: boolean): Iterable<string>
  entries(): Iterable<[string, Buffer]>
  /**
   * Encoded ids after `position` (0: from the start) in natural order, with their positions, up to
   * the last document stored when the walk begins (an index build walks it across many
   * transactions; writes maintain the entries of documents inserted meanwhile). It may list a
   * document since removed (its raw() is then undefined) or one inserted meanwhile.
   */
  scan(position: number): Iterable<{ id: string; position: number }>
  /** Throws (changing nothing) if this id cannot be stored; called before any index is touched. */
  check(idKey: string): void
  put(idKey: string, raw: Uint8Array): void
  /** Stores a new document; false, storing nothing, when one with this id exists (one lookup on disk). */
  insert(idKey: string, raw: Uint8Array): boolean
  delete(idKey: string): void
}

/** The entries of one index, sorted by (key, id): SortedEntries in memory, or on disk. */
export interface IndexEntries {
  insert(key: string, id: string): void
  /** A unique index's insert: false, inserting nothing, when another document holds the key. */
  claim(key: string, id: string): boolean
  delete(key: string, id: string): boolean
  idsWithKey(key: string): string[]
  collectKey(key: string, out: string[]): void
  range(lo: string, hi: string, descending: boolean): Iterable<Entry>
  /** Replaces every entry by these (index builds). */
  load(entries: Entry[]): void
  /** Throws (changing nothing) if this entry cannot be stored. */
  check(key: string, id: string): void
  /** Removes every entry (the index is dropped). */
  clear(): void
}

/** The storage of one collection: its documents and a maker of index entry lists. */
export interface CollectionStorage {
  docs: DocStore
  /** Entries for a new index (a unique one holds one document per key). */
  newIndexEntries(unique: boolean): IndexEntries
}

export interface StorageBackend {
  newCollection(): CollectionStorage
}

/** Documents in memory: an arena of raw bytes and a map from encoded _id to where they are. */
export class MemoryDocStore implements DocStore {
  private docs = new Map<string, Handle>()
  private readonly arena = new Arena()

  get size(): number {
    return this.docs.size
  }

  get dataBytes(): number {
    return this.arena.live
  }

  has(idKey: string): boolean {
    return this.docs.has(idKey)
  }

  raw(idKey: string): Buffer | undefined {
    const handle = this.docs.get(idKey)
    return handle === undefined ? undefined : this.arena.get(handle)
  }

  ids(reverse = false): Iterable<string> {
    return reverse ? [...this.docs.keys()].reverse() : this.docs.keys()
  }

  *entries(): Generator<[string, Buffer]> {
    for (const [id, handle] of this.docs) yield [id, this.arena.get(handle)]
  }

  /** In memory, positions count from the start: a build is never resumed (it is not logged until done). */
  *scan(position: number): Generator<{ id: string; position: number }> {
    if (position !== 0) throw new Error('the in-memory engine cannot resume an index build')
    // a removal shifts later documents forward, so each of those there now comes within `end`
    const end = this.docs.size
    let n = 0
    for (const id of this.docs.keys()) {
      if (++n > end) return
      yield { id, position: n }
    }
  }

  /** A consistent image of the documents' bytes, unaffected by later writes (for snapshots). */
  image(): Buffer[] {
    const frozen = this.arena.frozen()
    return [...this.docs.values()].map((h) => frozen.get(h))
  }

  check(): void {}

  insert(idKey: string, raw: Uint8Array): boolean {
    if (this.docs.has(idKey)) return false
    this.put(idKey, raw)
    return true
  }

  put(idKey: string, raw: Uint8Array): void {
    const old = this.docs.get(idKey)
    if (old !== undefined) this.arena.free(old)
    this.docs.set(idKey, this.arena.add(raw))
    this.reclaim()
  }

  delete(idKey: string): void {
    const old = this.docs.get(idKey)
    if (old === undefined) return
    this.arena.free(old)
    this.docs.delete(idKey)
    this.reclaim()
  }

  /** Copies live documents out of mostly-dead slabs, now and then (amortised by the arena). */
  private reclaim(): void {
    if (this.arena.wasteful) this.docs = this.arena.compact(this.docs)
  }
}

class MemoryEntries extends SortedEntries implements IndexEntries {
  claim(key: string, id: string): boolean {
    if (this.idsWithKey(key).length > 0) return false
    this.insert(key, id)
    return true
  }

  load(entries: Entry[]): void {
    this.replaceWith(SortedEntries.build(entries))
  }

  check(): void {}
}

export const MEMORY_BACKEND: StorageBackend = {
  newCollection: () => ({ docs: new MemoryDocStore(), newIndexEntries: () => new MemoryEntries() }),
}

export function memoryIndexEntries(): IndexEntries {
  return new MemoryEntries()
}
