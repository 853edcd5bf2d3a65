/**
 * The contract's `api.batching.watchedCache` (plugin-api.ts, WatchedCache): documents read by
 * flags, kept between requests for as long as a change stream of their collection says they have
 * not changed. A flags request of a known user then reads nothing from the database: a find costs
 * the service 100-200 µs of CPU and the database as much again, more than evaluating 50 flags
 * (docs/performance.md). The persons plugin keeps persons in one, the core's groups reader groups.
 *
 * What keeps it exact:
 * - Entries are served only while the stream is open, and only those read after it opened. An
 *   update, replace or delete evicts its document; an insert forgets every "not found" kept;
 *   anything else the stream reports (a drop, a rename, an invalidate, an error) empties the
 *   cache, which serves nothing until a stream is open again. Without change streams (a
 *   standalone MongoDB) nothing is kept.
 * - A write of this process evicts its key once acknowledged (`changed`), before the capture
 *   that made it answers: a `$set` captured here decides the next flags call, as without the
 *   cache. Another process's write is seen when its change arrives (once majority-committed).
 * - A read in flight when its document changed is not kept: it may hold the version before.
 */
import { BSON, ObjectId } from 'mongodb'
import type { ChangeStream, ChangeStreamDocument, Collection, Document } from 'mongodb'
import type { CachedRead, WatchedCache, WatchedCacheOptions } from '../plugin-api.ts'

/** Keys kept by default; at the limit the cache is emptied and fills again. */
export const DEFAULT_WATCHED_CACHE_LIMIT = 20_000
/** How long after a failed or ended change stream the next read may open another. */
const REOPEN_MS = 5_000

/**
 * The changes that matter, and of each only its kind and document key: an insert's key is not
 * sent (it is new, so nothing kept names it), which spares the database decoding each inserted
 * document for this stream.
 */
const PIPELINE = [
  {
    $project: {
      operationType: 1,
      documentKey: { $cond: [{ $eq: ['$operationType', 'insert'] }, '$$REMOVE', '$documentKey'] },
    },
  },
]

/** An `_id` as a map key, the same for the document read and for its changes: exact for every BSON type. */
const idKey = (id: unknown) =>
  id instanceof ObjectId ? id.toHexString() : BSON.EJSON.stringify({ id }, { relaxed: false })

export class DocumentCache<V> implements WatchedCache<V> {
  private readonly entries = new Map<string, { value: V; documentKey: string }>()
  private readonly keysByDocument = new Map<string, string>()
  /** Keys read and not found: forgotten at any insert. */
  private readonly notFound = new Set<string>()
  /** Inserts seen: a read that found nothing while one happened may have missed it. */
  private inserts = 0
  /**
   * What changed while reads were in flight (kept only while there are some): keys of this
   * process's writes, `_id`s of the stream's changes. Bounded: at the limit the reads in flight
   * are dropped instead.
   */
  private readonly changedDuringReads = new Set<string>()
  private readsInFlight = 0
  /** Bumped whenever what is kept is forgotten: a read begun before may not be kept. */
  private epoch = 0
  private serving = false
  private stream: ChangeStream | undefined
  private reopenTimer: NodeJS.Timeout | undefined
  private closed = false
  private toldUnavailable = false
  private readonly limit: number

  constructor(
    private readonly collection: Collection<Document>,
    private readonly options: WatchedCacheOptions = {},
  ) {
    this.limit = options.limit ?? DEFAULT_WATCHED_CACHE_LIMIT
  }

  get live(): boolean {
    return this.serving
  }

  async read(key: string, load: () => Promise<CachedRead<V> | undefined>): Promise<V | undefined> {
    if (!this.stream && !this.reopenTimer && !this.closed) this.open()
    if (this.serving) {
      const kept = this.entries.get(key)
      if (kept) return kept.value
      if (this.notFound.has(key)) return undefined
    }
    const epoch = this.epoch
    const inserts = this.inserts
    const wasServing = this.serving
    this.readsInFlight++
    try {
      const read = await load()
      const documentKey = read && idKey(read.documentId)
      const changed = documentKey
        ? this.changedDuringReads.has(key) || this.changedDuringReads.has(documentKey)
        : this.changedDuringReads.has(key) || inserts !== this.inserts
      if (wasServing && this.serving && epoch === this.epoch && !changed) this.keep(key, read, documentKey)
      return read?.value
    } finally {
      if (--this.readsInFlight === 0) this.changedDuringReads.clear()
    }
  }

  changed(key: string): void {
    this.noteChange(key)
    this.notFound.delete(key)
    const kept = this.entries.get(key)
    if (kept === undefined) return
    this.entries.delete(key)
    this.keysByDocument.delete(kept.documentKey)
  }

  close(): void {
    this.closed = true
    clearTimeout(this.reopenTimer)
    this.stop()
  }

  private keep(key: string, read: CachedRead<V> | undefined, documentKey: string | undefined): void {
    if (this.entries.size + this.notFound.size >= this.limit) this.forget()
    if (!read || documentKey === undefined) return void this.notFound.add(key)
    this.entries.set(key, { value: read.value, documentKey })
    this.keysByDocument.set(documentKey, key)
  }

  /** Notes a change for the reads in flight (a key or a document's `_id`). */
  private noteChange(what: string): void {
    if (this.readsInFlight === 0) return
    if (this.changedDuringReads.size >= this.limit) {
      this.epoch++
      this.changedDuringReads.clear()
    }
    this.changedDuringReads.add(what)
  }

  private forget(): void {
    this.epoch++
    this.entries.clear()
    this.keysByDocument.clear()
    this.notFound.clear()
  }

  private open(): void {
    const stream = this.collection.watch(PIPELINE)
    this.stream = stream
    void this.follow(stream).catch((error: Error) => {
      if (this.stream !== stream) return
      this.stop()
      if (!this.toldUnavailable) this.options.onUnavailable?.(error)
      this.toldUnavailable = true
      if (this.closed) return
      this.reopenTimer = setTimeout(() => {
        this.reopenTimer = undefined
      }, REOPEN_MS)
      this.reopenTimer.unref()
    })
  }

  private async follow(stream: ChangeStream): Promise<void> {
    // the first batch opens the stream at the server: what changes from here on reaches it
    const first = await stream.tryNext()
    if (this.stream !== stream) return
    this.serving = true
    if (first) this.apply(first as ChangeStreamDocument)
    for await (const change of stream) {
      if (this.stream !== stream) return
      this.apply(change as ChangeStreamDocument)
    }
    if (this.stream === stream) throw new Error('the change stream ended')
  }

  private apply(change: ChangeStreamDocument): void {
    const kind = change.operationType
    if (kind === 'insert') {
      this.inserts++
      this.notFound.clear()
      return
    }
    if (kind === 'update' || kind === 'replace' || kind === 'delete') {
      const documentKey = idKey(change.documentKey._id)
      this.noteChange(documentKey)
      const key = this.keysByDocument.get(documentKey)
      if (key !== undefined) this.changed(key)
      return
    }
    // a drop, rename or invalidate ends the stream: the next read opens another
    this.stop()
  }

  private stop(): void {
    this.serving = false
    this.forget()
    const stream = this.stream
    this.stream = undefined
    void stream?.close().catch(() => undefined)
  }
}
