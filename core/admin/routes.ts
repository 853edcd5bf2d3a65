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
import { keysEqual } from './key.ts'
import { CreateProjectBody, EventsQuery } from './schemas.ts'
import { listEvents, listWarnings } from './events.ts'

export interface AdminDeps {
  readonly db: Db
  /** The `events` service of the sink that stores events (sink-mongo); undefined when none does. */
  readonly events: EventsReader | undefined
  readonly projects: ProjectStore
  readonly adminKey: string
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

/** The admin key everywhere under /api, and a project's secret key on SECRET_KEY_PATHS (the kit's key guard). */
export function adminAuth(adminKey: string, projects: ProjectStore): Middleware {
  return keyGuard(
    { projects, isAdminKey: (token) => keysEqual(token, adminKey) },
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

export function mountAdmin(router: Router, { db, events, projects, adminKey }: AdminDeps): void {
  const json = koaBody({
    json: true,
    urlencoded: false,
    text: false,
    jsonLimit: '1mb',
    jsonStrict: true,
    onError: jsonError,
  })
  router.use('/api', adminAuth(adminKey, projects))

  router.post('/api/projects', json, async (ctx) => {
    const body = parseWith(CreateProjectBody, ctx.request.body)
    if (body.timezone !== undefined && !isValidTimezone(body.timezone))
      throw httpError('invalid_input', `timezone "${body.timezone}" is not an IANA time zone`, 'timezone')
    ctx.status = 201
    ctx.body = projectJson(await projects.create(body))
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
  router.get('/api/projects/:id/ingestion_warnings', async (ctx) => {
    const project = await projectParam(ctx, projects)
    ctx.body = await listWarnings(db, project, parseWith(EventsQuery, ctx.query))
  })
}

function jsonError(error: Error): never {
  throw httpError('invalid_json', `the request body is not valid JSON: ${error.message}`)
}
