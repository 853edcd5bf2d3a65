/**
 * createService: config in, running pieces out. Boot order (models.md §5.7): storage and hooks,
 * plugins in config order, routes, `ready`; shutdown in reverse: stop accepting, drain in-flight
 * requests, teardowns in reverse load order, close the database, all within
 * `server.shutdownTimeoutMs` (shutdown.ts).
 */
import http from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import type Koa from 'koa'
import type { Logger } from 'pino'
import type { Config } from './config.ts'
import type { EventsReader, IngestHooks, PluginDefinition, ServiceName } from './plugin-api.ts'
import { createHooks } from './hooks.ts'
import type { SetupScope } from './hooks.ts'
import { Engine } from './engine.ts'
import { loadPlugins, runTeardowns } from './loader.ts'
import type { LoadedPlugin } from './loader.ts'
import { createLogger, stdoutDestination } from './logger.ts'
import { openStorage } from './storage/mongo.ts'
import type { Storage } from './storage/mongo.ts'
import { ProjectStore } from './projects.ts'
import { GroupStore } from './model/groups.ts'
import { Pipeline } from './pipeline.ts'
import { createApp } from './server.ts'
import { adminKeyring, keyLabel, resolveAdminKey } from './admin/key.ts'
import { MongoAuditLog } from './admin/audit.ts'
import { openQueue } from './queue/connection.ts'
import type { QueueConnection } from './queue/connection.ts'
import { QueuePublisher } from './queue/publisher.ts'
import { QueueWorker } from './queue/worker.ts'
import { builtInPlugins, renamedPlugins } from '../plugins/index.ts'
import { shutDownWithin } from './shutdown.ts'
import { LiveEventStreams } from './admin/live-events.ts'

/**
 * The share of `server.shutdownTimeoutMs` requests in flight get to finish; the rest is kept for
 * the teardowns and closing the database, which must fit in the same budget.
 */
const DRAIN_SHARE = 0.75

export interface ServiceOptions {
  readonly config: Config
  /** Folder that relative plugin paths resolve from (the config file's folder). */
  readonly configDir?: string
  /** Application root: npm plugins are resolved from its node_modules. */
  readonly rootDir?: string
  readonly logger?: Logger
  readonly builtIns?: Readonly<Record<string, PluginDefinition>>
}

export interface Service {
  readonly config: Config
  readonly app: Koa
  readonly hooks: IngestHooks
  /** Runs the hooks' taps by the phase table; built once every plugin is set up. */
  readonly engine: Engine
  readonly storage: Storage
  readonly projects: ProjectStore
  readonly plugins: readonly LoadedPlugin[]
  readonly adminKey: string
  readonly logger: Logger
  /** Queue mode with the worker role: the consumer of the ingest stream. */
  readonly queueWorker?: QueueWorker
  listen(port?: number, host?: string): Promise<{ port: number; url: string }>
  close(): Promise<void>
}

export async function createService(options: ServiceOptions): Promise<Service> {
  const { config } = options
  const rootDir = path.resolve(options.rootDir ?? process.cwd())
  const logger = options.logger ?? createLogger(config.log.level, stdoutDestination(config.log.format))
  const dataDir = path.resolve(rootDir, config.storage.dataDir)
  const scope: SetupScope = {}
  const hooks = createHooks(scope)
  const storage = await openStorage({ ...config, storage: { ...config.storage, dataDir } }, logger)
  const projects = new ProjectStore(storage.db)
  const admin = resolveAdminKey(config.admin.apiKey, dataDir)
  // the core's services come first; the plugins add theirs
  const groups = new GroupStore(storage.db, { logger })
  const services = new Map<ServiceName, unknown>([['groups', groups]])
  const adminKeys = adminKeyring({ label: config.admin.apiKeyLabel, key: admin.key }, config.admin.keys)
  const audit = new MongoAuditLog(storage.db)
  let plugins: LoadedPlugin[]
  try {
    plugins = await loadPlugins(config.plugins, {
      hooks,
      scope,
      db: storage.db,
      projects,
      isAdminKey: (token) => keyLabel(token, adminKeys) !== undefined,
      adminKeyLabel: (token) => keyLabel(token, adminKeys),
      audit,
      logger,
      builtIns: options.builtIns ?? builtInPlugins,
      renamed: renamedPlugins,
      rootDir,
      configDir: path.resolve(options.configDir ?? path.join(rootDir, 'config')),
      dataDir,
      setupTimeoutMs: config.pipeline.pluginSetupTimeoutMs,
      services,
    })
  } catch (error) {
    await storage.close()
    throw error
  }
  const engine = Engine.build(hooks, { stepTimeoutMs: config.pipeline.stepTimeoutMs })
  logger.info({ taps: engine.order }, 'hooks tapped, in the order they run')
  let queue: QueueConnection | undefined
  if (config.mode === 'queue') {
    try {
      queue = await openQueue(config.queue, logger)
    } catch (error) {
      await runTeardowns(plugins, logger)
      await storage.close()
      throw error
    }
  }
  if (admin.generated)
    logger.warn(
      { adminApiKey: admin.key, file: admin.file },
      'generated an admin API key (shown once; it is kept in the data folder)',
    )

  let accepting = true
  const pipeline = new Pipeline(engine, storage.db, logger)
  // In queue mode capture publishes to the stream; the hook chain runs on the workers.
  const intake = queue ? new QueuePublisher(queue) : pipeline
  const live = new LiveEventStreams(config.admin.eventStreamHeartbeatMs)
  const app = createApp({
    config,
    logger,
    engine,
    storage,
    projects,
    pipeline: intake,
    adminKey: admin.key,
    events: services.get('events') as EventsReader | undefined,
    adminKeys,
    audit,
    replayer: pipeline,
    ingestionCounts: pipeline.counts,
    plugins,
    live,
    accepting: () => accepting,
    queueConnected: queue?.connected,
  })
  await engine.ready()
  const queueWorker =
    queue && config.queue.role !== 'capture'
      ? new QueueWorker({ queue, pipeline, projects, db: storage.db, logger })
      : undefined
  await queueWorker?.start()
  let server: http.Server | undefined
  let closing: Promise<void> | undefined

  /** Stops accepting and waits up to `waitMs` for the requests in flight, then closes their connections. */
  async function stopServer(waitMs: number): Promise<void> {
    if (!server) return
    const s = server
    const drained = new Promise<void>((resolve) => s.close(() => resolve()))
    s.closeIdleConnections()
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, waitMs).unref())
    await Promise.race([drained, deadline])
    s.closeAllConnections()
  }

  return {
    config,
    app,
    hooks,
    engine,
    storage,
    projects,
    plugins,
    adminKey: admin.key,
    logger,
    queueWorker,
    listen(port = config.server.port, host = config.server.host) {
      return new Promise((resolve, reject) => {
        server = http.createServer({ requestTimeout: config.server.requestTimeoutMs }, app.callback())
        server.once('error', reject)
        server.listen(port, host, () => {
          const address = server!.address() as AddressInfo
          const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
          resolve({ port: address.port, url: `http://${shown}:${address.port}` })
        })
      })
    },
    close() {
      if (closing) return closing
      accepting = false
      engine.closing()
      live.close()
      const budgetMs = config.server.shutdownTimeoutMs
      closing = shutDownWithin(budgetMs, [
        ['draining the requests in flight', () => stopServer(Math.floor(budgetMs * DRAIN_SHARE))],
        ['stopping the queue worker', () => queueWorker?.stop()],
        ['closing the queue connection', () => queue?.close()],
        ['saving the ingestion counts', () => pipeline.close()],
        ["running the plugins' teardowns", () => runTeardowns(plugins, logger)],
        ['closing the groups cache', () => groups.close()],
        ['closing the database', () => storage.close()],
      ])
      return closing
    },
  }
}
