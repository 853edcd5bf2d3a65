/**
 * The Koa app: error handling and access log first, CORS (permissive on the routes marked
 * `crossOrigin`, configured origins only elsewhere), then the router with the health, capture and
 * admin routes and whatever plugins mount through the `routes` hook.
 */
import Koa from 'koa'
import Router from '@koa/router'
import type { Logger } from 'pino'
import type { Config } from './config.ts'
import type { Engine } from './engine.ts'
import type { EventsReader } from './plugin-api.ts'
import type { ProjectStore } from './projects.ts'
import type { Storage } from './storage/mongo.ts'
import { errorsAndAccessLog } from './http/errors.ts'
import { cors } from './http/cors.ts'
import { staticRoutes } from './http/static-routes.ts'
import { mountCapture } from './routes/capture.ts'
import { mountCaptureV1 } from './routes/capture-v1.ts'
import type { Intake } from './routes/capture.ts'
import { mountAdmin } from './admin/routes.ts'
import { MongoAuditLog } from './admin/audit.ts'
import { LiveEventStreams } from './admin/live-events.ts'
import { DEFAULT_KEY_LABEL } from './admin/key.ts'
import type { LabelledKey } from './admin/key.ts'
import { renderMetrics } from './metrics.ts'
import type { Replayer } from './admin/dead-letters.ts'
import type { LoadedPlugin } from './loader.ts'

export interface AppDeps {
  readonly config: Config
  readonly logger: Logger
  readonly engine: Engine
  readonly storage: Storage
  readonly projects: ProjectStore
  readonly pipeline: Intake
  readonly adminKey: string
  /** The `events` service a plugin provided (sink-mongo), which the admin API reads events through. */
  readonly events?: EventsReader
  /** The live event streams; the service ends them when it closes. */
  readonly live?: LiveEventStreams
  /** Every admin key with its label; just `adminKey`, labelled "admin", when not given. */
  readonly adminKeys?: readonly LabelledKey[]
  /** The audit log the admin routes record their changes in; one over the storage when not given. */
  readonly audit?: MongoAuditLog
  /** The inline pipeline: it replays dead letters, whatever the mode. */
  readonly replayer: Replayer
  /** This process's ingestion counts, written before the health route reads the collection. */
  readonly ingestionCounts?: { flush(): Promise<void> }
  /** The loaded plugins, in configured order, for GET /api/pipeline. */
  readonly plugins: readonly LoadedPlugin[]
  /** False once shutdown has begun: readiness fails so load balancers stop sending traffic. */
  readonly accepting: () => boolean
  /** Queue mode: whether the NATS connection is up (capture cannot acknowledge without it). */
  readonly queueConnected?: () => boolean
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.config.server.trustProxy })
  const router = new Router()

  router.get('/_health', (ctx) => {
    ctx.body = { status: 'ok' }
  })
  router.get('/_readiness', async (ctx) => {
    const database = await deps.storage.ping()
    const queue = deps.queueConnected?.()
    const ready = database && queue !== false && deps.accepting()
    ctx.status = ready ? 200 : 503
    ctx.body = {
      status: ready ? 'ready' : 'not_ready',
      database: database ? 'ok' : 'unreachable',
      ...(queue === undefined ? {} : { queue: queue ? 'ok' : 'unreachable' }),
    }
  })
  router.get('/_metrics', (ctx) => {
    ctx.type = 'text/plain; version=0.0.4'
    ctx.body = renderMetrics()
  })
  mountCapture(router, deps)
  mountCaptureV1(router, deps)
  mountAdmin(router, {
    db: deps.storage.db,
    events: deps.events,
    projects: deps.projects,
    adminKeys: deps.adminKeys ?? [{ label: DEFAULT_KEY_LABEL, key: deps.adminKey }],
    audit: deps.audit ?? new MongoAuditLog(deps.storage.db),
    replayer: deps.replayer,
    ingestionCounts: deps.ingestionCounts,
    pipeline: { plugins: deps.plugins, order: deps.engine.order },
    live: deps.live ?? new LiveEventStreams(deps.config.admin.eventStreamHeartbeatMs),
  })
  deps.engine.mountRoutes(router)

  app.silent = true // errors are logged once, by errorsAndAccessLog
  app.use(errorsAndAccessLog(deps.logger))
  app.use(cors(router, { adminOrigins: deps.config.server.adminCorsOrigins }))
  app.use(staticRoutes(router))
  app.use(router.allowedMethods())
  return app
}
