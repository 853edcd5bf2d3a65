import { rename } from 'node:fs/promises'
import type { Catalog } from '../engine/catalog.ts'
import { DataDir } from './data-dir.ts'
import { Journal, SILENT } from './journal.ts'
import { LogWriter } from './log-writer.ts'
import { recover, type RecoveryResult } from './recovery.ts'
import { captureImage, writeSnapshot } from './snapshot.ts'

export interface DurabilityOptions {
  /** fdatasync at most this long after an acknowledged write; 0 = before every acknowledgement. */
  syncIntervalMs: number
  /** Compact when the log outgrows both this and the live data. */
  compactMinBytes: number
}

export const DEFAULT_DURABILITY: DurabilityOptions = { syncIntervalMs: 100, compactMinBytes: 64 * 1024 * 1024 }

/**
 * The data folder of one server: recovery at open, the write-ahead log while running, and
 * compaction (snapshot + fresh log) when the log has grown larger than the data it describes.
 */
export class Store {
  readonly journal: Journal
  readonly recovery: RecoveryResult
  private gen: number
  private compaction: Promise<void> | undefined
  private closing = false
  private failure: Error | undefined
  private readonly timer: NodeJS.Timeout

  private constructor(
    private readonly dir: DataDir,
    private readonly catalog: Catalog,
    private readonly options: DurabilityOptions,
    private readonly onError: (error: unknown) => void,
  ) {
    catalog.setListener(SILENT)
    this.recovery = recover(catalog, dir)
    this.gen = this.recovery.gen
    this.journal = new Journal(new LogWriter(dir.walPath(this.gen), this.recovery.validLength))
    this.timer = setInterval(() => void this.backgroundSync(), Math.max(options.syncIntervalMs, 10))
    this.timer.unref()
  }

  get listener(): Journal {
    return this.journal
  }

  /** Changes are applied in memory as they are made: nothing to wrap. */
  transact<T>(fn: () => T): T {
    return fn()
  }

  static open(dataDir: string, catalog: Catalog, options: DurabilityOptions, onError: (error: unknown) => void): Store {
    return new Store(new DataDir(dataDir), catalog, options, onError)
  }

  /** After a write is applied in memory, before it is acknowledged. */
  async commit(syncRequested: boolean): Promise<void> {
    if (this.failure) throw this.failure
    const writer = this.journal.current
    try {
      writer.flush()
      if (syncRequested || this.options.syncIntervalMs === 0) await writer.sync()
    } catch (error) {
      this.failure = new Error(
        `the embedded database could not write its log (${String(error)}); writes are refused until it is restarted`,
      )
      throw this.failure
    }
    if (!this.compaction && writer.size > Math.max(this.options.compactMinBytes, this.liveBytes())) {
      this.compact().catch((error: unknown) => this.onError(error))
    }
  }

  /** Whether writes are refused because the log could not be written. */
  get failed(): Error | undefined {
    return this.failure
  }

  private liveBytes(): number {
    let total = 0
    for (const coll of this.catalog.all()) total += coll.dataBytes
    return total
  }

  private async backgroundSync(): Promise<void> {
    const writer = this.journal.current
    if (!writer.dirty) return
    await writer.sync().catch((error: unknown) => {
      this.failure ??= new Error(`the embedded database could not sync its log (${String(error)})`)
    })
  }

  async sync(): Promise<void> {
    await this.journal.current.sync()
  }

  /**
   * Starts a new log, snapshots the state at that instant, then drops the old snapshot and logs.
   * Until the new snapshot is complete, recovery still uses the old one plus both logs.
   */
  compact(): Promise<void> {
    this.compaction ??= this.runCompaction().finally(() => {
      this.compaction = undefined
    })
    return this.compaction
  }

  /** An explicit request (the compact command): one that started earlier misses the writes since. */
  async compactNow(): Promise<void> {
    await this.compaction?.catch(() => undefined)
    await this.compact()
  }

  private async runCompaction(): Promise<void> {
    const previous = this.journal.current
    const gen = this.gen + 1
    this.journal.switchTo(new LogWriter(this.dir.walPath(gen)))
    this.gen = gen
    const image = captureImage(this.catalog)
    await previous.close()
    const tmp = this.dir.snapshotPath(gen, true)
    const complete = await writeSnapshot(tmp, image, () => this.closing)
    if (!complete) return
    await rename(tmp, this.dir.snapshotPath(gen))
    this.dir.syncDir()
    this.dir.removeBefore(gen)
  }

  async close(): Promise<void> {
    this.closing = true
    clearInterval(this.timer)
    await this.compaction?.catch(() => undefined)
    await this.journal.current.close()
    this.dir.removeTemporaries()
  }
}
