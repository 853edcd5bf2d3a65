import { encode, isPlainObject } from './bson/codec.ts'
import { ChangeFeed } from './change-streams.ts'
import type { CommandContext, Parameters, ServerInfo } from './commands/context.ts'
import { commandName, runCommand, WRITE_COMMANDS } from './commands/dispatch.ts'
import { CursorRegistry } from './cursors.ts'
import { Catalog, type CatalogListener } from './engine/catalog.ts'
import { mongoError, toMongoError } from './errors.ts'
import { IndexBuilds } from './index-builds.ts'
import { LEGACY_FOLDER } from './lmdb/migrate.ts'
import { LmdbStore } from './lmdb/store.ts'
import { DataDir } from './persistence/data-dir.ts'
import { fanOut, SILENT } from './persistence/journal.ts'
import { Store, type DurabilityOptions } from './persistence/store.ts'
import { TtlMonitor } from './ttl.ts'
import type { IncomingCommand } from './wire/messages.ts'
import { WriteTurns } from './write-turns.ts'

/** What keeps the data: the in-memory catalog with its log and snapshots, or lmdb on disk. */
export type StorageEngine = 'memory' | 'lmdb'

/** The part of a store the server uses (persistence/store.ts, lmdb/store.ts). */
interface Persistence {
  readonly listener: CatalogListener
  readonly failed: Error | undefined
  transact<T>(fn: () => T): T
  commit(syncRequested: boolean): Promise<void>
  sync(): Promise<void>
  compactNow(): Promise<void>
  close(): Promise<void>
}

export interface CoreOptions {
  dataDir: string
  engine: StorageEngine
  /** lmdb only: LZ4-compress stored documents larger than 1 KB. */
  compression: boolean
  replSetName?: string
  durability: DurabilityOptions
  log: (level: 'info' | 'warn' | 'error', message: string, error?: unknown) => void
}

const RETRY_MEMORY = 10_000

/** The retryable-write identity of a command: its session and transaction number. */
function retryKey(cmd: IncomingCommand): string | undefined {
  const { lsid, txnNumber } = cmd.body
  if (txnNumber === undefined || !isPlainObject(lsid)) return undefined
  const id = lsid.id as { buffer?: Uint8Array } | undefined
  if (!id?.buffer) return undefined
  return `${Buffer.from(id.buffer).toString('hex')}:${String(txnNumber)}`
}

/** Whether the client asked for journaled durability (j: true, or w: "majority"). */
function wantsSync(cmd: IncomingCommand): boolean {
  const wc = cmd.body.writeConcern
  return isPlainObject(wc) && (wc.j === true || wc.w === 'majority')
}

async function openStore(options: CoreOptions): Promise<{ catalog: Catalog; store: Persistence }> {
  if (options.engine === 'memory') {
    const catalog = new Catalog(SILENT)
    const store = Store.open(options.dataDir, catalog, options.durability, (e) =>
      options.log('error', 'log compaction failed', e),
    )
    return { catalog, store }
  }
  const legacy = new DataDir(options.dataDir)
  if (legacy.snapshots().length > 0 || legacy.wals().length > 0)
    options.log(
      'warn',
      `${options.dataDir} holds the in-memory engine's snapshot and log: copying them into lmdb once before serving (about a minute per million documents); the old files then move to ${LEGACY_FOLDER}/`,
    )
  const lmdb = await LmdbStore.open(options.dataDir, { ...options.durability, compression: options.compression })
  const migrated = lmdb.recovery.migrated
  if (migrated?.documents)
    options.log(
      'warn',
      `copied ${migrated.documents} documents of ${migrated.collections} collections from the in-memory engine's files into lmdb; the old files are in ${migrated.movedTo} (remove them once the data is checked)`,
    )
  const { rolledBackFrom: from, replayed } = lmdb.recovery
  if (from !== undefined)
    options.log(
      'warn',
      `the data file was opened at its last checkpoint: the machine restarted since it was written, and the commits after it (up to transaction ${from}) may not have reached the disk; ${replayed} were redone from the journal`,
    )
  return { catalog: lmdb.catalog, store: lmdb }
}

/**
 * The data folder and everything that runs commands on it: catalog, store, cursors, TTL monitor,
 * change streams. Commands run one at a time on this thread's event loop; a write's reply waits
 * until it is committed (and, when asked or configured, fsynced). The listeners are the server's
 * (server.ts), on this thread or, when reader threads serve reads, on another (writer-thread.ts).
 */
export class CommandCore {
  /** Replies of recent retryable writes: a retry after a lost reply must not apply twice. */
  private readonly retries = new Map<string, Uint8Array>()
  private readonly writeTurns = new WriteTurns()
  private readonly indexBuilds: IndexBuilds
  /** Set by stopWaiting: the index builds' end, which close waits for. */
  private buildsStopped: Promise<void> | undefined

  private constructor(
    private readonly store: Persistence,
    private readonly catalog: Catalog,
    private readonly cursors: CursorRegistry,
    private readonly ttl: TtlMonitor,
    private readonly feed: ChangeFeed | undefined,
    readonly info: ServerInfo,
    private readonly parameters: Parameters,
    private readonly log: CoreOptions['log'],
  ) {
    this.indexBuilds = new IndexBuilds(catalog, this.writeTurns, store, log)
  }

  /** `cursors`: this thread's share of the cursor ids (cursors.ts) when other threads make cursors too. */
  static async open(options: CoreOptions, info: ServerInfo, cursors = new CursorRegistry()): Promise<CommandCore> {
    const { catalog, store } = await openStore(options)
    const feed = options.replSetName ? new ChangeFeed() : undefined
    catalog.setListener(feed ? fanOut([store.listener, feed]) : store.listener)
    const parameters: Parameters = { ttlMonitorSleepSecs: 60 }
    const ttl = new TtlMonitor(
      catalog,
      () => parameters.ttlMonitorSleepSecs,
      () => store.commit(false),
      (e) => options.log('error', 'TTL pass failed', e),
      (fn) => store.transact(fn),
    )
    const core = new CommandCore(store, catalog, cursors, ttl, feed, info, parameters, options.log)
    core.indexBuilds.resume()
    return core
  }

  private context(connectionId: number): CommandContext {
    return {
      catalog: this.catalog,
      cursors: this.cursors,
      info: this.info,
      changeStreams: this.feed,
      parameters: this.parameters,
      connectionId,
      syncLog: () => this.store.sync(),
      compactLog: () => this.store.compactNow(),
      indexBuilds: this.indexBuilds,
      after: [],
    }
  }

  async execute(cmd: IncomingCommand, connectionId: number): Promise<Uint8Array> {
    let name = ''
    try {
      name = commandName(cmd)
    } catch {
      // runCommand answers the malformed command
    }
    const isWrite = WRITE_COMMANDS.has(name)
    if (isWrite && this.store.failed) return encode(mongoError('InternalError', this.store.failed.message).toReply())
    if (!isWrite) return runCommand(cmd, this.context(connectionId))
    await this.writeTurns.next()
    let reply: Uint8Array
    const context = this.context(connectionId)
    try {
      const retry = retryKey(cmd)
      const replayed = retry === undefined ? undefined : this.retries.get(retry)
      if (replayed) return replayed
      try {
        reply = await this.store.transact(() => runCommand(cmd, context))
      } catch (error) {
        // runCommand answers every command error: this is the store failing to commit
        this.log('error', 'could not commit a write', error)
        return encode(mongoError('InternalError', error instanceof Error ? error.message : String(error)).toReply())
      }
      if (retry !== undefined) {
        this.retries.set(retry, reply)
        if (this.retries.size > RETRY_MEMORY) this.retries.delete(this.retries.keys().next().value as string)
      }
    } finally {
      this.writeTurns.done()
    }
    try {
      await this.store.commit(wantsSync(cmd))
    } catch (error) {
      this.log('error', 'could not write the log', error)
      return encode(mongoError('InternalError', error instanceof Error ? error.message : String(error)).toReply())
    }
    try {
      // an index build's chunks take their turns among the other writes; its caller waits for the end
      await Promise.all(context.after)
    } catch (error) {
      return encode(toMongoError(error).toReply())
    }
    return reply
  }

  /**
   * Ends the change streams' waits and stops the index builds (first, so that pending getMores and
   * createIndexes answer before the close: a build left unfinished resumes at the next start).
   */
  stopWaiting(): void {
    this.buildsStopped ??= this.indexBuilds.close()
    this.feed?.close()
  }

  /** Closes the cursors and the TTL monitor, then flushes and closes the data folder. */
  async close(): Promise<void> {
    this.stopWaiting()
    await this.buildsStopped
    this.cursors.close()
    this.ttl.close()
    await this.store.close()
  }
}
