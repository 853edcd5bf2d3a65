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
  /** The file was set back to its last checkpoint after a reboot (from this txnid). */
  rolledBackFrom?: bigint
  /** Journal records redone on the file as opened. */
  replayed: number
}

/**
 * Checkpoints run in the background this often while writes come in (or at the sync interval, if
 * longer), and sooner once the journal since the last one reaches JOURNAL_BYTES: what a restart
 * after a power cut replays.
 */
const CHECKPOINT_MS = 1000
const JOURNAL_BYTES = 32 * 1024 * 1024

/**
 * The data folder kept on disk by lmdb: only the pages in use stay in memory (the kernel's page
 * cache), and a restart reads nothing but the catalog records.
 *
 * Each write command runs in one lmdb transaction, committed (written to the file) before its
 * reply: it survives kill -9. Its journal record (journal.ts) is fdatasynced at most
 * `syncIntervalMs` after it, and before the reply of a write asking for j: true or
 * w: "majority" (every write with `syncIntervalMs: 0`): after a power cut the file opens at the
 * last checkpoint and the journal redoes the commits since. Checkpoints run in the background.
 */
export class LmdbStore {
  private dirty = false
  private lastCheckpoint = performance.now()
  private syncing: Promise<void> | undefined
  private nextSync: Promise<void> | undefined
  private failure: Error | undefined
  private readonly timer: NodeJS.Timeout

  private constructor(
    private readonly env: LmdbEnvironment,
    readonly catalog: Catalog,
    readonly listener: CatalogListener,
    readonly recovery: LmdbOpenResult,
    private readonly options: DurabilityOptions,
  ) {
    this.timer = setInterval(() => void this.backgroundSync(), Math.max(options.syncIntervalMs, 10))
    this.timer.unref()
  }

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
      // the file as opened (after a kill -9, commits no checkpoint covered yet) becomes the checkpoint
      await env.checkpoint()
      env.startJournal()
      const recovery = { collections, migrated, rolledBackFrom: env.rolledBackFrom, replayed: env.replayed }
      return new LmdbStore(env, catalog, recorder, recovery, options)
    } catch (error) {
      await env.close()
      throw error
    }
  }

  /**
   * Runs one command's changes in one transaction (committed once `fn`'s promise settles). A
   * commit that fails (disk full) leaves the catalog in memory ahead of the file: writes are then
   * refused until a restart reopens the file as it is.
   */
  transact<T>(fn: () => T): T {
    return this.env.transact(fn, (error) => this.refuseWrites('commit to its data file', error))
  }

  /** After a failure of the file or the journal: this write and every later one fail with `what`. */
  private refuseWrites(what: string, error: unknown): never {
    this.failure ??= new Error(
      `the embedded database could not ${what} (${String(error)}); writes are refused until it is restarted`,
    )
    throw this.failure
  }

  /** After a write is committed, before it is acknowledged. */
  async commit(syncRequested: boolean): Promise<void> {
    if (this.failure) throw this.failure
    this.dirty = true
    if (this.env.journalBytes >= JOURNAL_BYTES && !this.syncing) void this.sync().catch(() => undefined)
    if (syncRequested || this.options.syncIntervalMs === 0) await this.syncJournal()
  }

  /** Every commit so far on the disk: in the journal, or (after a transaction too large for it) by a checkpoint. */
  private async syncJournal(): Promise<void> {
    const outcome = await this.env.syncJournal().catch((error: unknown) => this.refuseWrites('sync its journal', error))
    if (outcome === 'checkpoint needed') await this.sync()
  }

  get failed(): Error | undefined {
    return this.failure
  }

  /** A checkpoint of every commit so far; callers arriving during one share the next. */
  sync(): Promise<void> {
    if (!this.syncing) return this.startSync()
    this.nextSync ??= this.syncing
      .catch(() => undefined)
      .then(() => {
        this.nextSync = undefined
        return this.startSync()
      })
    return this.nextSync
  }

  private startSync(): Promise<void> {
    this.dirty = false
    this.lastCheckpoint = performance.now()
    const running = this.env.checkpoint().finally(() => {
      this.syncing = undefined
    })
    this.syncing = running
    return running.catch((error: unknown) => this.refuseWrites('sync its data file', error))
  }

  private async backgroundSync(): Promise<void> {
    if (this.env.journalDirty) await this.syncJournal().catch(() => undefined)
    const due = performance.now() - this.lastCheckpoint >= Math.max(CHECKPOINT_MS, this.options.syncIntervalMs)
    if (!this.dirty || this.syncing || !due) return
    await this.sync().catch(() => undefined)
  }

  /** lmdb reuses freed pages itself: nothing to compact. */
  async compactNow(): Promise<void> {}

  /** Bytes of the data file (lmdb/data.mdb). */
  fileBytes(): number {
    return this.env.fileBytes()
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    await this.syncing?.catch(() => undefined)
    await this.env.checkpoint().catch(() => undefined)
    await this.env.close()
  }
}
