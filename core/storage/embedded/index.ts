import path from 'node:path'
import { socketPlace, socketUrl, tcpUrl } from './listen-address.ts'
import { DataDir } from './persistence/data-dir.ts'
import { lockFolder, type FolderLock } from './persistence/folder-lock.ts'
import { DEFAULT_DURABILITY } from './persistence/store.ts'
import { EmbeddedServer, type ServerOptions, type StorageEngine } from './server.ts'
import { startInWorker, type HostedServer } from './worker.ts'

async function startHere(options: ServerOptions): Promise<HostedServer> {
  const server = await EmbeddedServer.start(options)
  return { tcpPort: server.info.tcpPort, close: () => server.close() }
}

/**
 * The embedded MongoDB-compatible server: the single-machine default store and the test
 * database. See docs/embedded-mongo.md for what it supports and how durable it is.
 */
export interface EmbeddedMongoOptions {
  /** Folder of the data (created 0700 if missing); one server per folder. */
  dataDir: string
  /**
   * Also listen on TCP (default: only the Unix socket in the data folder). The server has no
   * authentication: over TCP any local user can read and write everything. For tools only.
   */
  tcp?: { host?: string; port?: number }
  /** Answer hello as a one-member replica set of this name (enables change streams). */
  replSetName?: string
  /**
   * 0: every write is answered once on the disk. Otherwise the in-memory engine fdatasyncs its log
   * at most this long after an acknowledged write (default 100); lmdb flushes each commit right
   * after it in any case. j: true always waits for the disk.
   */
  syncIntervalMs?: number
  /** In-memory engine: compact the log once it is larger than both the live data and this. Default 64 MiB. */
  compactMinBytes?: number
  /** How long to wait for a server that holds the folder to finish exiting. Default 2 s. */
  lockWaitMs?: number
  /**
   * 'lmdb' (default): on disk in <dataDir>/lmdb, only the working set in memory; a folder in the
   * in-memory engine's format is migrated once at start. 'memory': every collection in memory,
   * rebuilt at start from a snapshot and a log. EMBEDDED_MONGO_ENGINE sets the default.
   */
  engine?: StorageEngine
  /** lmdb only: LZ4-compress stored documents larger than 1 KB (default off: measured slower and no smaller). */
  compression?: boolean
  /**
   * lmdb only: threads that answer reads (find, count, distinct, aggregate) beside the thread that
   * writes, so a read never waits for a write. 0: one thread runs every command in turn. Default:
   * DEFAULT_READERS; EMBEDDED_MONGO_READERS sets it too. The memory engine always uses one thread.
   */
  readers?: number
  /** Where the server reports problems it cannot answer to a client (default: console.error). */
  log?: ServerOptions['log']
  /**
   * 'worker' (default): a worker thread of this process, so the database neither waits for nor
   * slows down the service's own event loop. 'current-thread': on the caller's event loop.
   */
  runIn?: 'worker' | 'current-thread'
}

export interface EmbeddedMongo {
  /** The driver's URL of the Unix socket: mongodb://%2F…%2Fmongod.sock/?directConnection=true[&replicaSet=name]. */
  readonly url: string
  readonly socketPath: string
  /** Set when asked to listen on TCP too. */
  readonly tcpUrl?: string
  readonly tcpPort?: number
  /** Stops accepting, closes connections, flushes and fsyncs the log, releases the folder. */
  close(): Promise<void>
}

const defaultLog: ServerOptions['log'] = (level, message, error) => {
  if (level !== 'info') console.error(`[embedded-mongo] ${level}: ${message}`, error ?? '')
}

/**
 * The engine when neither EMBEDDED_MONGO_ENGINE nor the option names one: lmdb, whose memory is
 * bounded by the working set and whose restart reads no data, so a single machine can be left
 * running for years. The in-memory engine ('memory') costs less CPU per write but needs RAM for
 * all the data and replays it at every start (docs/embedded-mongo.md).
 */
export const DEFAULT_ENGINE: StorageEngine = 'lmdb'

/** See `readers`: one, the thread holding the connections (docs/embedded-mongo.md, "Reads beside writes"). */
export const DEFAULT_READERS = 1

function readersOf(value: number | string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_READERS
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 16)
    throw new Error(`the embedded MongoDB's readers must be a whole number from 0 to 16, not '${value}'`)
  return n
}

function engineOf(value: string | undefined): StorageEngine {
  if (value === undefined || value === '') return DEFAULT_ENGINE
  if (value === 'memory' || value === 'lmdb') return value
  throw new Error(`unknown embedded MongoDB storage engine '${value}' (expected 'memory' or 'lmdb')`)
}

/**
 * Makes the folder private, takes its lock, then serves it. The lock comes before anything is
 * read or written: a stale socket file is only removed by the holder.
 */
export async function startEmbeddedMongo(options: EmbeddedMongoOptions): Promise<EmbeddedMongo> {
  const dataDir = path.resolve(options.dataDir)
  const log = options.log ?? defaultLog
  // before the lock: a bad setting must not leave the folder locked
  const engine = engineOf(options.engine ?? process.env.EMBEDDED_MONGO_ENGINE)
  const readers = readersOf(options.readers ?? process.env.EMBEDDED_MONGO_READERS)
  for (const problem of new DataDir(dataDir).makePrivate())
    log('warn', `could not make the data folder private: ${problem}`)
  const socket = socketPlace(dataDir)
  let lock: FolderLock
  try {
    lock = await lockFolder(dataDir, { socketPath: socket.path, waitMs: options.lockWaitMs })
  } catch (error) {
    socket.dispose()
    throw error
  }
  socket.removeStale()
  const tcp = options.tcp ? { host: options.tcp.host ?? '127.0.0.1', port: options.tcp.port ?? 0 } : undefined
  const resolved: ServerOptions = {
    dataDir,
    engine,
    compression: options.compression ?? false,
    readers,
    socketPath: socket.path,
    tcp,
    replSetName: options.replSetName,
    durability: {
      syncIntervalMs: options.syncIntervalMs ?? DEFAULT_DURABILITY.syncIntervalMs,
      compactMinBytes: options.compactMinBytes ?? DEFAULT_DURABILITY.compactMinBytes,
    },
    log,
  }
  let server: HostedServer
  try {
    server = options.runIn === 'current-thread' ? await startHere(resolved) : await startInWorker(resolved)
  } catch (error) {
    await lock.release()
    socket.dispose()
    throw error
  }
  let closing: Promise<void> | undefined
  return {
    url: socketUrl(socket.path, options.replSetName),
    socketPath: socket.path,
    tcpUrl: tcp && server.tcpPort !== undefined ? tcpUrl(tcp.host, server.tcpPort, options.replSetName) : undefined,
    tcpPort: server.tcpPort,
    close() {
      closing ??= server.close().finally(async () => {
        await lock.release()
        socket.dispose()
      })
      return closing
    },
  }
}
