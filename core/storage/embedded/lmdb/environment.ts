import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync } from 'node:fs'
import path from 'node:path'
import { open, type Database, type RootDatabase } from 'lmdb'
import { CheckpointFile, currentBootId, lastPage, newestMeta, rollBackAfterReboot } from './checkpoint.ts'
import { FileExtender } from './file-extender.ts'
import { JournaledCommits, type Sealed } from './journaled-commits.ts'

/**
 * 8 KiB pages (lmdb's default is the OS page, 4 KiB): documents of ~1 KB fill them better (a
 * smaller data file for event documents) and keys may be twice as long.
 */
const PAGE_SIZE = 8192
/** lmdb's largest key at that page size: longer index keys are refused, as MongoDB < 4.2 did. */
export const MAX_KEY_BYTES = 4026

export type BinaryDb = Database<Buffer, Buffer>

/** LMDB's meta pages (0 and 1): page flags at byte 18 of the 24-byte page header, then magic and version. */
const META_PAGE_FLAG = 0x08
const MAGIC = 0xbeefc0de

/**
 * Refuses a data file whose meta pages are not LMDB's: lmdb itself crashes the process on some
 * such files (a segmentation fault) instead of returning an error.
 */
function checkDataFile(dir: string): number | undefined {
  const file = path.join(dir, 'data.mdb')
  if (!existsSync(file)) return undefined
  const fd = openSync(file, 'r')
  try {
    const page = Buffer.alloc(64)
    const problem = (pageNumber: number, pageSize: number): string | undefined => {
      const read = readSync(fd, page, 0, page.length, pageNumber * pageSize)
      if (read === 0 && pageNumber === 0) return undefined
      if (read < page.length) return `it ends before meta page ${pageNumber}`
      if (!(page.readUInt16LE(18) & META_PAGE_FLAG) || page.readUInt32LE(24) !== MAGIC)
        return `meta page ${pageNumber} is not an LMDB meta page`
      return undefined
    }
    const first = problem(0, 0)
    const pageSize = first === undefined ? page.readUInt32LE(48) : 0
    const second = first ?? (pageSize >= 4096 ? problem(1, pageSize) : `its page size (${pageSize}) is not valid`)
    if (second)
      throw new Error(
        `${file} is damaged (${second}): the embedded database does not start on it. Restore the data folder from a backup, or move ${dir} away to start empty.`,
      )
    return first === undefined && pageSize ? pageSize : undefined
  } finally {
    closeSync(fd)
  }
}

/** The four ordered stores (see LmdbEnvironment), as the collection and index stores use them. */
export interface LmdbStores {
  readonly docs: BinaryDb
  readonly natural: BinaryDb
  readonly entries: BinaryDb
  readonly meta: BinaryDb
  /** A store's counters changed: they are written once, at the end of the transaction. */
  touched(store: { flush(): void }): void
  /**
   * Counts the transactions begun (write transactions on the writer, read views on a reader): a
   * value read in one is known to hold only within it.
   */
  readonly transactionNumber: number
}

/**
 * Opens the environment of `dir` on this thread. lmdb-js keeps one environment per file in the
 * process: another thread opening the same folder shares it (and its lock), so a reader thread
 * reads the pages the writer commits without opening the file twice.
 */
export function openRoot(dir: string): RootDatabase {
  return open({
    path: dir,
    maxDbs: 8,
    pageSize: PAGE_SIZE,
    noSync: true,
    // pages read through the map one at a time, each in its own folio (file-extender.ts)
    ...({ noReadAhead: true } as object),
    overlappingSync: false,
    keyEncoding: 'binary',
    encoding: 'binary',
  })
}

/** The four stores of an opened root (docs LZ4-compressed when asked: lmdb-js decompresses on read). */
export function openStores(
  root: RootDatabase,
  compression: boolean,
): Omit<LmdbStores, 'touched' | 'transactionNumber'> {
  const db = (name: string, compressed = false) =>
    root.openDB({ name, keyEncoding: 'binary', encoding: 'binary', compression: compressed }) as unknown as BinaryDb
  return { docs: db('docs', compression), natural: db('natural'), entries: db('entries'), meta: db('meta') }
}

export interface EnvironmentOptions {
  /** LZ4 per value (documents over 1 KB): fewer bytes on disk and in the page cache. */
  compression: boolean
}

/**
 * The on-disk store of one data folder: an lmdb environment (<dataDir>/lmdb) with four ordered
 * stores shared by every collection, whose keys begin with a u32 prefix naming the collection or
 * the index:
 *   docs     prefix | encoded _id            → u64 record number | document BSON
 *   natural  prefix | u64 record number      → encoded _id   (insertion order)
 *   entries  prefix | index key | encoded _id → u16 length of the encoded _id
 *   meta     catalog records, per-collection counters, the prefix counter
 *
 * lmdb runs with noSync: a commit is written to the file (write(2)) and visible at once, which
 * kill -9 does not undo. checkpoint() makes the commits so far durable and the file safe from a
 * power cut: it keeps a read transaction open on the newest commit (lmdb then reuses none of its
 * pages), fdatasyncs the file, records that commit's meta record in `checkpoint` (checkpoint.ts),
 * and only then lets go of the previous checkpoint's read transaction. After a reboot the file is
 * opened at the last checkpoint, and the journal (journaled-commits.ts) redoes the commits after
 * it: syncJournal() makes the commits so far durable without a checkpoint.
 */
export class LmdbEnvironment implements LmdbStores {
  /** Stores whose counters changed in the current transaction (written once, before its commit). */
  private readonly dirty = new Set<{ flush(): void }>()
  /** The read transaction that keeps the last checkpoint's pages from being reused. */
  private pinned: { done(): void } | undefined
  /** Set when the file was set back to its last checkpoint at open (the txnid it was at). */
  rolledBackFrom: bigint | undefined
  private readonly checkpoints: CheckpointFile
  private readonly extender: FileExtender
  /** The file needs writing ahead (file-extender.ts), at the next moment no transaction is open. */
  private extendDue = false
  /** Write transactions begun and not yet committed. */
  private openTransactions = 0
  transactionNumber = 0
  private readonly journal: JournaledCommits
  /** Journal records redone at open (after a reboot). */
  replayed = 0

  private constructor(
    readonly dir: string,
    readonly root: RootDatabase,
    readonly docs: BinaryDb,
    readonly natural: BinaryDb,
    readonly entries: BinaryDb,
    readonly meta: BinaryDb,
  ) {
    this.checkpoints = new CheckpointFile(dir)
    this.extender = new FileExtender(this.dataFile, this.pageSize())
    this.extender.extend(lastPage(newestMeta(this.dataFile, this.pageSize())))
    this.journal = new JournaledCommits(dir, [docs, natural, entries, meta])
  }

  /**
   * Redoes the journal's records after the file as opened. The file as opened stays pinned until
   * the first checkpoint: should the power fail again before it, the next start opens the file
   * there again (its checkpoint is still the one before) and replays again.
   */
  private replayJournal(): void {
    this.pinned = this.root.useReadTransaction()
    this.replayed = this.journal.replay((fn) => this.root.transactionSync(fn))
  }

  /**
   * Journals every transaction from now on; call once a checkpoint on the disk holds the file as
   * opened (the journal found at open is then deleted).
   */
  startJournal(): void {
    this.journal.start()
  }

  /** Makes every commit so far durable: its journal record is on the disk, or a checkpoint is needed. */
  async syncJournal(): Promise<'synced' | 'checkpoint needed'> {
    const outcome = await this.journal.sync()
    // the file grows between checkpoints too: whether to write ahead is checked as often as this
    if (this.extender.due(lastPage(newestMeta(this.dataFile, this.pageSize())))) this.extendDue = true
    this.extendIfDue()
    return outcome
  }

  get journalDirty(): boolean {
    return this.journal.dirty
  }

  /** Bytes of journal since the last checkpoint began (what a replay would redo). */
  get journalBytes(): number {
    return this.journal.bytes
  }

  private extendIfDue(): void {
    if (!this.extendDue || this.openTransactions > 0) return
    this.extendDue = false
    this.extender.extend(lastPage(newestMeta(this.dataFile, this.pageSize())))
  }

  private get dataFile(): string {
    return path.join(this.dir, 'data.mdb')
  }

  static open(dir: string, options: EnvironmentOptions): LmdbEnvironment {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const pageSize = checkDataFile(dir) ?? PAGE_SIZE
    const rolledBack = rollBackAfterReboot(dir, pageSize)
    const root = openRoot(dir)
    // lmdb creates its files 0644; the data folder is private, and so are they.
    for (const name of readdirSync(dir)) chmodSync(path.join(dir, name), 0o600)
    const { docs, natural, entries, meta } = openStores(root, options.compression)
    const env = new LmdbEnvironment(dir, root, docs, natural, entries, meta)
    env.rolledBackFrom = rolledBack
    env.replayJournal()
    return env
  }

  touched(store: { flush(): void }): void {
    this.dirty.add(store)
  }

  private flushTouched(): void {
    for (const store of this.dirty) store.flush()
    this.dirty.clear()
  }

  /** `fn` with the counters it touched written before it returns, its error kept for after the commit. */
  private body<T>(fn: () => T, failed: (error: unknown) => void, sealed: Sealed): () => unknown {
    const fail = (error: unknown) => {
      failed(error)
      this.flushTouched()
      this.journal.seal(sealed)
      return undefined
    }
    return () => {
      let value: T
      try {
        value = fn()
      } catch (error) {
        return fail(error)
      }
      if (!(value instanceof Promise)) {
        this.flushTouched()
        this.journal.seal(sealed)
        return value
      }
      return value.then((settled: unknown) => {
        this.flushTouched()
        this.journal.seal(sealed)
        return settled
      }, fail)
    }
  }

  /**
   * Runs `fn` in one write transaction, committed (written, not fsynced) when it returns or its
   * promise settles. It is
   * committed even when `fn` fails: the catalog in memory already holds what `fn` changed before
   * failing (a bulk write keeps the documents before its first error), so the file must too.
   * `fn`'s error is thrown after the commit; a failure of lmdb itself goes to `onCommitFailure`.
   */
  transact<T>(
    fn: () => T,
    onCommitFailure: (error: unknown) => never = (error) => {
      throw error
    },
  ): T {
    this.extendIfDue()
    let failure: { error: unknown } | undefined
    const sealed: Sealed = { seq: 0, record: undefined }
    const body = this.body(
      fn,
      (error) => {
        failure = { error }
      },
      sealed,
    )
    const commitFailed = (error: unknown): never => {
      this.journal.discard()
      return onCommitFailure(error)
    }
    let result: unknown
    this.openTransactions += 1
    this.transactionNumber += 1
    try {
      result = this.root.transactionSync(body)
    } catch (error) {
      this.openTransactions -= 1
      return commitFailed(error)
    }
    if (result instanceof Promise) result.finally(() => (this.openTransactions -= 1)).catch(() => undefined)
    else this.openTransactions -= 1
    const settle = (value: unknown) => {
      this.journal.committed(sealed)
      if (failure) throw failure.error
      return value
    }
    return (result instanceof Promise ? result.then(settle, commitFailed) : settle(result)) as T
  }

  /**
   * Makes every commit so far durable and the newest one the point a reboot opens the file at.
   * Callers must not overlap (store.ts runs one at a time).
   */
  async checkpoint(): Promise<void> {
    const pin = this.root.useReadTransaction()
    const seq = this.journal.checkpointBegins()
    let meta: ReturnType<typeof newestMeta>
    try {
      // no commit can come between the pin and this read: commits run on this thread
      meta = newestMeta(this.dataFile, this.pageSize())
      if (this.extender.due(lastPage(meta))) this.extendDue = true
      await this.sync()
      await this.checkpoints.write(meta, currentBootId())
    } catch (error) {
      pin.done()
      throw error
    }
    this.pinned?.done()
    this.pinned = pin
    await this.journal.checkpointed(seq)
  }

  private pageBytes: number | undefined

  private pageSize(): number {
    this.pageBytes ??= (this.root.getStats() as { pageSize?: number }).pageSize ?? PAGE_SIZE
    return this.pageBytes
  }

  /** Flushes every commit so far to the disk (fdatasync of the data file). */
  sync(): Promise<void> {
    return new Promise((resolve, reject) => {
      ;(this.root as unknown as { sync(cb: (error?: unknown) => void): void }).sync((error) =>
        error ? reject(error) : resolve(),
      )
    })
  }

  /** Bytes of the data file. */
  fileBytes(): number {
    const stats = this.root.getStats() as { lastPageNumber?: number; pageSize?: number }
    return (stats.lastPageNumber ?? 0) * (stats.pageSize ?? 4096)
  }

  async close(): Promise<void> {
    this.pinned?.done()
    this.pinned = undefined
    await this.journal.close()
    await this.checkpoints.close()
    await this.root.close()
  }
}

/**
 * Puts an entry unless its key is already in `db` (lmdb's MDB_NOOVERWRITE): false, writing
 * nothing, when it is. (lmdb-js returns the outcome, though its types say void.)
 */
export function putNew(db: BinaryDb, key: Buffer, value: Buffer): boolean {
  return (db.putSync as unknown as (k: Buffer, v: Buffer, o: { noOverwrite: boolean }) => boolean).call(
    db,
    key,
    value,
    {
      noOverwrite: true,
    },
  )
}

/**
 * The entries of [lo, hi) of one store, read in small batches, each from where the last ended,
 * so that a walk can be interleaved with writes (a cursor reads its batches between commands)
 * and sees the store as it is at each batch, like the in-memory lists.
 */
export function* walk(
  db: BinaryDb,
  lo: Buffer,
  hi: Buffer,
  reverse: boolean,
  batch = 128,
): Generator<{ key: Buffer; value: Buffer }> {
  let start: Buffer = reverse ? hi : lo
  let exclusive = false
  for (;;) {
    const items: Array<{ key: Buffer; value: Buffer }> = []
    const range = db.getRange({ start, end: reverse ? lo : hi, reverse, limit: batch, exclusiveStart: exclusive })
    for (const { key, value } of range) items.push({ key: Buffer.from(key), value: Buffer.from(value) })
    yield* items
    if (items.length < batch) return
    start = items[items.length - 1].key
    exclusive = true
  }
}
