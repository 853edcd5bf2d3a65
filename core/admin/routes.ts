/**
 * The admin API under /api (Bearer admin key): projects, and reading back stored events and
 * ingestion warnings. Plugins add their own /api routes through the `routes` hook; the key check
 * here covers them too.
 */
import type Router from '@koa/router'
import { koaBody } from 'koa-body'
import type { Middleware } from 'koa'
import type { Db } from 'mongodb'
import type { EventsReader, Project } from '../plugin-api.ts'
import { httpError, parseWith } from '../plugin-api.ts'
import type { ProjectStore } from '../projects.ts'
import { isValidTimezone } from '../projects.ts'
import { NEEDS_ADMIN_KEY, keyGuard, projectParam } from '../http/kit.ts'
import { keyLabel } from './key.ts'
import type { LabelledKey } from './key.ts'
import { AuditQuery, CreateProjectBody, EventsQuery, LiveEventsQuery, PageQuery } from './schemas.ts'
import { listEvents, listWarnings } from './events.ts'
import type { MongoAuditLog } from './audit.ts'
import { ingestionHealth } from './health.ts'
import { listDeadLetters, replayDeadLetter } from './dead-letters.ts'
import type { Replayer } from './dead-letters.ts'
import { pipelineJson } from './pipeline-info.ts'
import type { PipelineSources } from './pipeline-info.ts'
import type { LiveEventStreams } from './live-events.ts'

export interface AdminDeps {
  readonly db: Db
  /** The `events` service of the sink that stores events (sink-mongo); undefined when none does. */
  readonly events: EventsReader | undefined
  readonly projects: ProjectStore
  readonly adminKeys: readonly LabelledKey[]
  readonly audit: MongoAuditLog
  /** The inline pipeline, which replays dead letters (in every mode: a replay is not queued). */
  readonly replayer: Replayer
  /** This process's ingestion counts, written before the health route reads the collection. */
  readonly ingestionCounts?: { flush(): Promise<void> }
  /** The loaded plugins and the engine's tap order, for GET /api/pipeline. */
  readonly pipeline: PipelineSources
  /** The open live event streams, which the service ends when it closes. */
  readonly live: LiveEventStreams
}

/**
 * The /api paths PostHog's server-side SDKs call with a project's secret key (posthog-node's
 * `personalApiKey`): there, that key is accepted too and names the project (`ctx.state.authProject`).
 * Everywhere else under /api only the admin key is.
 */
export const SECRET_KEY_PATHS: readonly RegExp[] = [
  /^\/api\/feature_flag\/local_evaluation\/?$/,
  /^\/api\/projects\/[^/]+\/feature_flags\/[^/]+\/remote_config\/?$/,
]

/**
 * The admin keys everywhere under /api (the key's label goes to `ctx.state.adminKeyLabel`, for the
 * audit log), and a project's secret key on SECRET_KEY_PATHS (the kit's key guard).
 */
export function adminAuth(adminKeys: readonly LabelledKey[], projects: ProjectStore): Middleware {
  return keyGuard(
    { projects, adminKeyLabel: (token) => keyLabel(token, adminKeys) },
    (ctx) => SECRET_KEY_PATHS.some((path) => path.test(ctx.path)),
    NEEDS_ADMIN_KEY,
  )
}

export function projectJson(project: Project) {
  return {
    id: project.id,
    name: project.name,
    api_token: project.apiToken,
    secret_api_token: project.secretApiToken,
    timezone: project.timezone,
  }
}

/** A project as the audit log keeps it: the secret key is a credential and stays out. */
function auditedProject(project: Project) {
  const { secret_api_token: _secret, ...rest } = projectJson(project)
  return rest
}

export function mountAdmin(router: Router, deps: AdminDeps): void {
  const { db, events, projects, adminKeys, audit, live } = deps
  const json = koaBody({
    json: true,
    urlencoded: false,
    text: false,
    jsonLimit: '1mb',
    jsonStrict: true,
    onError: jsonError,
  })
  router.use('/api', adminAuth(adminKeys, projects))

  router.post('/api/projects', json, async (ctx) => {
    const body = parseWith(CreateProjectBody, ctx.request.body)
    if (body.timezone !== undefined && !isValidTimezone(body.timezone))
      throw httpError('invalid_input', `timezone "${body.timezone}" is not an IANA time zone`, 'timezone')
    const project = await projects.create(body)
    await audit.record(ctx, {
      projectId: project.id,
      entityType: 'project',
      entityId: project.id,
      action: 'created',
      before: null,
      after: auditedProject(project),
    })
    ctx.status = 201
    ctx.body = projectJson(project)
  })
  // which admin key this is: a console checks a key and shows whose it is
  router.get('/api/me', (ctx) => {
    ctx.body = { key_label: ctx.state.adminKeyLabel ?? null }
  })
  router.get('/api/projects', async (ctx) => {
    ctx.body = { results: (await projects.list()).map(projectJson) }
  })
  router.get('/api/projects/:id', async (ctx) => {
    ctx.body = projectJson(await projectParam(ctx, projects))
  })
  router.get('/api/projects/:id/events', async (ctx) => {
    const project = await projectParam(ctx, projects)
    ctx.body = await listEvents(events, project, parseWith(EventsQuery, ctx.query), ctx.URL)
  })
  router.get('/api/projects/:id/events/stream', async (ctx) => {
    const project = await projectParam(ctx, projects)
    const query = parseWith(LiveEventsQuery, ctx.query)
    const after = ctx.get('Last-Event-ID') || undefined
    await live.start(events, project.id, { event: query.event, distinctId: query.distinct_id, after }, ctx.res)
    ctx.respond = false
  })
  router.get('/api/projects/:id/ingestion_warnings', async (ctx) => {
    const project = await projectParam(ctx, projects)
    ctx.body = await listWarnings(db, project, parseWith(EventsQuery, ctx.query))
  })
  router.get('/api/projects/:id/ingestion/health', async (ctx) => {
    const project = await projectParam(ctx, projects)
    await deps.ingestionCounts?.flush()
    ctx.body = await ingestionHealth(db, project.id)
  })
  router.get('/api/projects/:id/dead_letters', async (ctx) => {
    const project = await projectParam(ctx, projects)
    ctx.body = await listDeadLetters(db, project, parseWith(PageQuery, ctx.query), ctx.URL)
  })
  router.post('/api/projects/:id/dead_letters/:dead_letter_id/replay', async (ctx) => {
    const project = await projectParam(ctx, projects)
    ctx.body = await replayDeadLetter(ctx, { db, replayer: deps.replayer, audit }, project, ctx.params.dead_letter_id!)
  })
  router.get('/api/pipeline', (ctx) => {
    ctx.body = pipelineJson(deps.pipeline)
  })
  router.get('/api/projects/:id/audit', async (ctx) => {
    const project = await projectParam(ctx, projects)
    ctx.body = await audit.list(project.id, parseWith(AuditQuery, ctx.query), ctx.URL)
  })
  router.get('/api/projects/:id/audit/:audit_id', async (ctx) => {
    const project = await projectParam(ctx, projects)
    const entry = await audit.get(project.id, String(ctx.params.audit_id))
    if (!entry) throw httpError('not_found', `no audit record ${ctx.params.audit_id}`, 'audit_id')
    ctx.body = entry
  })
}

function jsonError(error: Error): never {
  throw httpError('invalid_json', `the request body is not valid JSON: ${error.message}`)
}
