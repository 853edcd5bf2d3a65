import path from 'node:path'
import { Catalog, type CatalogListener } from '../engine/catalog.ts'
import { SILENT } from '../persistence/journal.ts'
import type { DurabilityOptions } from '../persistence/store.ts'
import { LmdbBackend, LmdbCatalogRecorder } from './catalog-store.ts'
import { LmdbEnvironment } from './environment.ts'
import { migrateLegacyFolder, type MigrationResult } from './migrate.ts'

export interface LmdbOpenResult {
  collections: number
  migrated?: MigrationResult
}

/**
 * The data folder kept on disk by lmdb: only the pages in use stay in memory (the kernel's page
 * cache), and a restart reads nothing but the catalog records.
 *
 * Each write command runs in an lmdb transaction (commands queued meanwhile share it), committed
 * (written to the file) before its reply: it survives kill -9. lmdb fdatasyncs every commit right
 * after it, overlapped with the next ones, and a power cut leaves the file at the last flushed
 * commit (environment.ts). A write asking for j: true or w: "majority" is answered once its commit
 * is flushed; with `syncIntervalMs: 0` every write is.
 */
export class LmdbStore {
  private failure: Error | undefined
  /** The commit of the last write applied to the catalog, until it is visible in the file. */
  private applied: Promise<void> | undefined
  /** The last queued commit, which close() waits for. */
  private lastCommit: Promise<unknown> | undefined

  private constructor(
    private readonly env: LmdbEnvironment,
    readonly catalog: Catalog,
    readonly listener: CatalogListener,
    readonly recovery: LmdbOpenResult,
    private readonly options: DurabilityOptions,
  ) {}

  static async open(dataDir: string, options: DurabilityOptions & { compression: boolean }): Promise<LmdbStore> {
    const env = LmdbEnvironment.open(path.join(dataDir, 'lmdb'), { compression: options.compression })
    try {
      const backend = new LmdbBackend(env)
      const catalog = new Catalog(SILENT, backend)
      const recorder = new LmdbCatalogRecorder(env)
      let collections = recorder.load(catalog, backend)
      catalog.setListener(recorder)
      const migrated = await migrateLegacyFolder(dataDir, env, catalog)
      if (migrated) collections = [...catalog.all()].length
      catalog.setListener(SILENT)
      return new LmdbStore(env, catalog, recorder, { collections, migrated }, options)
    } catch (error) {
      await env.close()
      throw error
    }
  }

  /** Commands are queued into lmdb's next transaction: the next one may be queued before this one commits. */
  readonly queuesCommits = true

  /**
   * Queues one command's changes for lmdb's next transaction; settles once committed. A commit
   * that fails (disk full) leaves the catalog in memory ahead of the file: writes are then refused
   * until a restart reopens the file as it is.
   */
  transact<T>(fn: () => T): Promise<Awaited<T>> {
    const refuse = (error: unknown): never => {
      this.failure ??= new Error(
        `the embedded database could not commit to its data file (${String(error)}); writes are refused until it is restarted`,
      )
      throw this.failure
    }
    let markCommitted!: () => void
    const settled = new Promise<void>((resolve) => {
      markCommitted = resolve
    })
    const committed = this.env.transactQueued(() => {
      this.applied = settled
      return fn()
    }, refuse)
    committed.then(markCommitted, markCommitted)
    this.lastCommit = settled
    void settled.then(() => {
      if (this.applied === settled) this.applied = undefined
    })
    return committed
  }

  /**
   * Set while a write has changed the catalog in memory but its commit is not visible yet: a read
   * waits for it (commits are in order, so the last one covers the others). A write still queued
   * has changed nothing, and a read need not wait for it (nor for the fsync before its turn).
   */
  get pendingCommit(): Promise<unknown> | undefined {
    return this.applied
  }

  /** After a write is committed, before it is acknowledged: j: true waits for the flush. */
  async commit(syncRequested: boolean): Promise<void> {
    if (this.failure) throw this.failure
    if (syncRequested || this.options.syncIntervalMs === 0) await this.sync()
  }

  get failed(): Error | undefined {
    return this.failure
  }

  /** Settles once every commit so far is on the disk. */
  sync(): Promise<void> {
    return this.env.flushed().catch((error: unknown) => {
      this.failure ??= new Error(
        `the embedded database could not sync its data file (${String(error)}); writes are refused until it is restarted`,
      )
      throw this.failure
    })
  }

  /** lmdb reuses freed pages itself: nothing to compact. */
  async compactNow(): Promise<void> {}

  /** Bytes of the data file (lmdb/data.mdb). */
  fileBytes(): number {
    return this.env.fileBytes()
  }

  async close(): Promise<void> {
    await this.lastCommit
    await this.env.flushed().catch(() => undefined)
    await this.env.sync().catch(() => undefined)
    await this.env.close()
  }
}
