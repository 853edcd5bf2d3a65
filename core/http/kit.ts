/**
 * The HTTP kit of the plugin contract (`PluginApi.http`): the core's own body reading, SDK payload
 * decoding, rate limiting and key checks, handed to plugins that mount routes, so that their
 * routes fail with the same catalogue errors as the core's. The core's /api guard is built here too.
 */
import type { Context, Middleware, Next } from 'koa'
import type { CursorPage, HttpKit, Page, PayloadLimits, Project, ProjectLookup } from '../plugin-api.ts'
import { httpError } from '../plugin-api.ts'
import { bearerToken, keysEqual } from '../admin/key.ts'
import { readPayload, singleValues } from './payload.ts'
import { readBody } from './read-body.ts'
import { ProjectRateLimiter } from './rate-limit.ts'

export interface KeyChecks {
  readonly projects: ProjectLookup
  /** The label of the admin key `token` is (the audit log records it), or undefined when it is none. */
  adminKeyLabel(token: string): string | undefined
}

export const NEEDS_ADMIN_KEY = 'the admin API needs the header Authorization: Bearer <admin API key>'
const NEEDS_SECRET_KEY = 'this route needs the header Authorization: Bearer <project secret key or admin API key>'

/**
 * The guard of a route that takes the admin key, and a project's secret key where `takesSecretKey`
 * says so: the admin key sets `ctx.state.admin`, a secret key `ctx.state.authProject`. A request
 * that already passed a guard (a plugin's route under /api) is not checked twice.
 */
export function keyGuard(keys: KeyChecks, takesSecretKey: (ctx: Context) => boolean, missing: string): Middleware {
  return async function requireKey(ctx: Context, next: Next) {
    if (ctx.state.admin === true || (ctx.state.authProject && takesSecretKey(ctx))) return next()
    const token = bearerToken(ctx.get('Authorization'))
    if (!token) throw httpError('not_authenticated', missing)
    const label = keys.adminKeyLabel(token)
    if (label !== undefined) {
      ctx.state.admin = true
      ctx.state.adminKeyLabel = label
      return next()
    }
    if (token.startsWith('phs_') && takesSecretKey(ctx)) {
      const project = await keys.projects.bySecretToken(token)
      if (project) {
        ctx.state.authProject = project
        return next()
      }
    }
    throw httpError('authentication_failed', 'the API key is not valid for this route')
  }
}

const QUERY = Symbol('hedgerow.singleQuery')
type QueryContext = Context & { [QUERY]?: Record<string, string | undefined> }

/** Query strings up to this long are remembered with their values; longer ones (a GET's `data=`) rarely repeat. */
const REMEMBERED_QUERY_CHARS = 128
const REMEMBERED_QUERIES = 256
/**
 * Recent short query strings → their single values, frozen because requests share them. SDKs send
 * the same few (`v=2`, `v=2&config=true`), and Koa 3 parses each request's query anew through
 * URLSearchParams, a visible part of a flags request's CPU.
 */
const rememberedQueries = new Map<string, Readonly<Record<string, string | undefined>>>()

/** The query as single values, made once per request (the payload reader and the route both read it). */
function queryOf(ctx: Context): Record<string, string | undefined> {
  const c = ctx as QueryContext
  if (c[QUERY]) return c[QUERY]
  const text = ctx.querystring
  const remember = text.length <= REMEMBERED_QUERY_CHARS
  let single = remember ? rememberedQueries.get(text) : undefined
  if (single === undefined) {
    single = Object.freeze(singleValues(ctx.query))
    if (remember) {
      if (rememberedQueries.size >= REMEMBERED_QUERIES) rememberedQueries.clear()
      rememberedQueries.set(text, single)
    }
  }
  c[QUERY] = single
  return single
}

/** A public key from `?token=`, `X-API-Key` or a Bearer header, in that order. */
function publicKeyOf(ctx: Context): string | undefined {
  const token = queryOf(ctx).token
  return token || ctx.get('X-API-Key').trim() || bearerToken(ctx.get('Authorization'))
}

function publicKeyGuard(projects: ProjectLookup): Middleware {
  return async function requirePublicKey(ctx: Context, next: Next) {
    const key = publicKeyOf(ctx)
    if (!key)
      throw httpError(
        'missing_api_key',
        'this route needs the project API key (phc_…) as ?token=, X-API-Key or Authorization: Bearer',
        'token',
      )
    const project = await projects.byApiToken(key)
    if (!project)
      throw httpError('invalid_api_key', 'the project API key is not valid: no project has this key', 'token')
    ctx.state.project = project
    ctx.state.projectId = project.id
    return next()
  }
}

/** The project named by `:id`, or a 404. */
export async function projectParam(ctx: Context, projects: ProjectLookup): Promise<Project> {
  const id = Number(ctx.params.id)
  const project = Number.isSafeInteger(id) && id > 0 ? await projects.get(id) : undefined
  if (!project) throw httpError('not_found', `no project with id ${ctx.params.id}`, 'id')
  ctx.state.projectId = project.id
  return project
}

async function readJson(ctx: Context, limitBytes: number): Promise<unknown> {
  const bytes = await readBody(ctx.req, limitBytes)
  if (bytes.length === 0) return {}
  try {
    return JSON.parse(bytes.toString('utf8'))
  } catch (error) {
    throw httpError('invalid_json', `the request body is not valid JSON: ${(error as Error).message}`)
  }
}

function page<T>(ctx: Context, all: T[], defaultLimit = 100): Page<T> {
  const limit = Math.min(Math.max(Number(ctx.query.limit) || defaultLimit, 1), 1000)
  const offset = Math.max(Number(ctx.query.offset) || 0, 0)
  const link = (at: number) => {
    const url = new URL(ctx.URL)
    url.searchParams.set('limit', String(limit))
    url.searchParams.set('offset', String(at))
    return url.toString()
  }
  return {
    count: all.length,
    next: offset + limit < all.length ? link(offset + limit) : null,
    previous: offset > 0 ? link(Math.max(offset - limit, 0)) : null,
    results: all.slice(offset, offset + limit),
  }
}

function cursorPage<T>(
  ctx: Context,
  rows: T[],
  limit: number,
  param: string,
  cursorOf: (last: T) => string,
): CursorPage<T> {
  const results = rows.slice(0, limit)
  if (rows.length <= limit) return { results, next: null }
  const url = new URL(ctx.URL)
  url.searchParams.set(param, cursorOf(results[results.length - 1]!))
  return { results, next: url.toString() }
}

export function createHttpKit(keys: KeyChecks): HttpKit {
  return Object.freeze({
    auth: Object.freeze({
      adminKey: keyGuard(keys, () => false, NEEDS_ADMIN_KEY),
      secretKey: keyGuard(keys, () => true, NEEDS_SECRET_KEY),
      publicKey: publicKeyGuard(keys.projects),
    }),
    bearerToken: (ctx: Context) => bearerToken(ctx.get('Authorization')),
    keysEqual,
    projectParam: (ctx: Context) => projectParam(ctx, keys.projects),
    readBody: (ctx: Context, limitBytes: number) => readBody(ctx.req, limitBytes),
    readJson,
    readPayload: ((ctx: Context, limits: PayloadLimits, allowEmpty?: true) =>
      allowEmpty
        ? readPayload(ctx, queryOf(ctx), limits, true)
        : readPayload(ctx, queryOf(ctx), limits)) as HttpKit['readPayload'],
    query: queryOf,
    page,
    cursorPage,
    rateLimiter: (perSecond: number, burst?: number) => new ProjectRateLimiter(perSecond, burst),
  })
}
