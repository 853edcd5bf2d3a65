/**
 * Several HTTP processes on one port (node:cluster; the primary hands connections out in turn).
 * The primary serves no requests: it owns what must exist once per machine — the embedded
 * database (one data folder belongs to one process, so the workers reach it over its Unix
 * socket) and a generated admin key — then forks the workers, replaces one that crashes, and on
 * SIGTERM/SIGINT stops them all (each drains its requests) before closing the database, giving up
 * (exit 1) when that takes more than the workers' shutdown budget plus PRIMARY_EXTRA_MS.
 *
 * Flag-definition caches stay correct across workers because the decide plugin polls the
 * project's version document in the shared database (pollIntervalMs).
 */
import cluster from 'node:cluster'
import type { Worker } from 'node:cluster'
import os from 'node:os'
import path from 'node:path'
import type { Logger } from 'pino'
import type { Config } from './config.ts'
import { resolveAdminKey } from './admin/key.ts'
import type { EmbeddedMongo } from './storage/embedded/index.ts'
import { startServiceStore } from './storage/mongo.ts'
import { shutDownWithin } from './shutdown.ts'

/** The configured count, else one per core in production and one in development. */
export function workerCount(config: Config, env: NodeJS.ProcessEnv = process.env): number {
  if (config.server.workers !== undefined) return config.server.workers
  return env.NODE_ENV === 'production' ? os.availableParallelism() : 1
}

export interface PrimaryOptions {
  readonly config: Config
  readonly rootDir: string
  readonly logger: Logger
  readonly workers: number
}

export interface Primary {
  /** Resolves once every worker listens. */
  readonly ready: Promise<void>
  /** Stops the workers (SIGTERM, then SIGKILL after the shutdown timeout) and the embedded database. */
  stop(): Promise<void>
}

/** A worker still running this long after its own shutdown budget is killed. */
const WORKER_KILL_GRACE_MS = 5_000
/** What the primary allows itself past the workers' budget: their kill grace, then closing the database. */
const PRIMARY_EXTRA_MS = 2 * WORKER_KILL_GRACE_MS
/** A worker that exits this soon after it was forked failed to boot: restarting would loop. */
const BOOT_FAILURE_MS = 10_000
const RESTART_DELAY_MS = 1_000

export async function startPrimary({ config, rootDir, logger, workers }: PrimaryOptions): Promise<Primary> {
  const dataDir = path.resolve(rootDir, config.storage.dataDir)
  const env: Record<string, string> = { WORKERS: String(workers) }
  let embedded: EmbeddedMongo | undefined
  if (!config.storage.mongodbUrl) {
    embedded = await startServiceStore(path.join(dataDir, 'mongo'))
    env.MONGODB_URL = embedded.url
    logger.warn(
      { url: embedded.url },
      'using the embedded single-machine database, shared by the workers; set MONGODB_URL for production',
    )
  }
  const admin = resolveAdminKey(config.admin.apiKey, dataDir)
  if (admin.generated)
    logger.warn(
      { adminApiKey: admin.key, file: admin.file },
      'generated an admin API key (shown once; it is kept in the data folder)',
    )
  env.ADMIN_API_KEY = admin.key

  let stopping = false
  const live = new Set<Worker>()
  let listening = 0
  let markReady: () => void = () => undefined
  let failBoot: (error: Error) => void = () => undefined
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve
    failBoot = reject
  })

  const fork = (): void => {
    const forkedAt = Date.now()
    const worker = cluster.fork(env)
    let listened = false
    live.add(worker)
    worker.once('listening', () => {
      listened = true
      if (++listening === workers) markReady()
    })
    worker.once('exit', (code, signal) => {
      live.delete(worker)
      if (stopping) return
      if (!listened || Date.now() - forkedAt < BOOT_FAILURE_MS) {
        failBoot(new Error(`worker ${worker.process.pid} exited during boot (code ${code}, signal ${signal})`))
        if (!listened) return
      }
      logger.error({ pid: worker.process.pid, code, signal }, 'worker exited; starting another')
      setTimeout(() => !stopping && fork(), RESTART_DELAY_MS).unref()
    })
  }
  for (let i = 0; i < workers; i++) fork()

  let stopped: Promise<void> | undefined
  const stopWorkers = (): Promise<unknown> =>
    Promise.all(
      [...live].map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve()
            const kill = setTimeout(
              () => worker.process.kill('SIGKILL'),
              config.server.shutdownTimeoutMs + WORKER_KILL_GRACE_MS,
            )
            worker.once('exit', () => {
              clearTimeout(kill)
              resolve()
            })
            worker.process.kill('SIGTERM')
          }),
      ),
    )
  const stop = (): Promise<void> => {
    stopping = true
    stopped ??= shutDownWithin(
      config.server.shutdownTimeoutMs + PRIMARY_EXTRA_MS,
      [
        ['stopping the workers', stopWorkers],
        ['closing the embedded database', () => embedded?.close()],
      ],
      `server.shutdownTimeoutMs + ${PRIMARY_EXTRA_MS} ms`,
    )
    return stopped
  }

  ready.catch(() => undefined)
  return { ready, stop }
}
