import path from 'node:path'
import { DataDir } from './persistence/data-dir.ts'
import { DEFAULT_DURABILITY, type DurabilityOptions } from './persistence/store.ts'
import { EmbeddedServer, type ServerOptions, type StorageEngine } from './server.ts'
import { startInWorker, type HostedServer } from './worker.ts'

async function startHere(options: ServerOptions): Promise<HostedServer> {
  const server = await EmbeddedServer.start(options)
  return { ...server.info, close: () => server.close() }
}

/**
 * The embedded MongoDB-compatible server: the single-machine default store and the test
 * database. See docs/embedded-mongo.md for what it supports and how durable it is.
 */
export interface EmbeddedMongoOptions {
  /** Folder of the data (created if missing); one server per folder. */
  dataDir: string
  /** Default 127.0.0.1. */
  host?: string
  /** Default 0: an ephemeral port (read it from `port` or `url`). */
  port?: number
  /** Answer hello as a one-member replica set of this name (enables change streams). */
  replSetName?: string
  /** fdatasync the log at most this long after an acknowledged write; 0 = before each reply. Default 100. */
  syncIntervalMs?: number
  /** Compact the log once it is larger than both the live data and this. Default 64 MiB. */
  compactMinBytes?: number
  /**
   * 'lmdb' (default): on disk in <dataDir>/lmdb, only the working set in memory; a folder in the
   * in-memory engine's format is migrated once at start. 'memory': every collection in memory,
   * rebuilt at start from a snapshot and a log. EMBEDDED_MONGO_ENGINE sets the default.
   */
  engine?: StorageEngine
  /** lmdb only: LZ4-compress stored documents larger than 1 KB (default off: measured slower and no smaller). */
  compression?: boolean
  /** Where the server reports problems it cannot answer to a client (default: console.error). */
  log?: ServerOptions['log']
  /**
   * 'worker' (default): a worker thread of this process, so the database neither waits for nor
   * slows down the service's own event loop. 'current-thread': on the caller's event loop.
   */
  runIn?: 'worker' | 'current-thread'
}

export interface EmbeddedMongo {
  /** mongodb://host:port/?directConnection=true (plus &replicaSet=name in replica-set mode). */
  readonly url: string
  readonly port: number
  /** Stops accepting, closes connections, flushes and fsyncs the log, releases the folder. */
  close(): Promise<void>
}

function urlOf(host: string, port: number, replSetName: string | undefined): string {
  const shownHost = host.includes(':') ? `[${host}]` : host
  const rs = replSetName ? `&replicaSet=${encodeURIComponent(replSetName)}` : ''
  return `mongodb://${shownHost}:${port}/?directConnection=true${rs}`
}

const defaultLog: ServerOptions['log'] = (level, message, error) => {
  if (level !== 'info') console.error(`[embedded-mongo] ${level}: ${message}`, error ?? '')
}

function engineOf(value: string | undefined): StorageEngine {
  if (value === undefined || value === '' || value === 'lmdb') return 'lmdb'
  if (value === 'memory') return 'memory'
  throw new Error(`unknown embedded MongoDB storage engine '${value}' (expected 'memory' or 'lmdb')`)
}

export function serverOptions(options: EmbeddedMongoOptions): ServerOptions {
  const durability: DurabilityOptions = {
    syncIntervalMs: options.syncIntervalMs ?? DEFAULT_DURABILITY.syncIntervalMs,
    compactMinBytes: options.compactMinBytes ?? DEFAULT_DURABILITY.compactMinBytes,
  }
  return {
    dataDir: path.resolve(options.dataDir),
    engine: engineOf(options.engine ?? process.env.EMBEDDED_MONGO_ENGINE),
    compression: options.compression ?? false,
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    replSetName: options.replSetName,
    durability,
    log: options.log ?? defaultLog,
  }
}

export async function startEmbeddedMongo(options: EmbeddedMongoOptions): Promise<EmbeddedMongo> {
  const resolved = serverOptions(options)
  const dir = new DataDir(resolved.dataDir)
  dir.lock()
  let server: HostedServer
  try {
    server = options.runIn === 'current-thread' ? await startHere(resolved) : await startInWorker(resolved)
  } catch (error) {
    dir.unlock()
    throw error
  }
  const { host, port, replSetName } = server
  let closing: Promise<void> | undefined
  return {
    url: urlOf(host, port, replSetName),
    port,
    close() {
      closing ??= server.close().finally(() => dir.unlock())
      return closing
    },
  }
}
