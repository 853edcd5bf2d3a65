/**
 * The OFREP endpoints (OpenFeature Remote Evaluation Protocol), on the same evaluator as /flags:
 *   POST /ofrep/v1/evaluate/flags/:key   one flag (server providers)
 *   POST /ofrep/v1/evaluate/flags        every flag, with an ETag (web providers)
 *   GET  /ofrep/v1/configuration         what this server supports
 *   GET  /ofrep/v1/events?token=         flag changes as Server-Sent Events (ofrep/event-stream.ts)
 * The project's public key comes in `X-API-Key` or `Authorization: Bearer`. Errors use OFREP's
 * bodies (`{key?, errorCode, errorDetails}`), which the providers turn into OpenFeature errors.
 */
import { createHash } from 'node:crypto'
import type Router from '@koa/router'
import type { Context } from 'koa'
import type { HttpKit, PayloadLimits, Project, ProjectLookup, RateLimiter } from '../../../core/plugin-api.ts'
import { HttpError, crossOrigin } from '../../../core/plugin-api.ts'
import type { FlagsService } from '../service.ts'
import type { FlagDocument } from '../store/documents.ts'
import { disabled, missingKey, needsTargetingKey, OfrepError, readContext, toOfrep } from '../ofrep/mapping.ts'
import type { ContextRequest, OfrepFailure, OfrepSuccess } from '../ofrep/mapping.ts'
import type { DefinitionEventStreams } from '../ofrep/event-stream.ts'

export interface OfrepRouteDeps {
  projects: ProjectLookup
  http: HttpKit
  flags: FlagsService
  limits: PayloadLimits
  rateLimiter?: RateLimiter
  /** Polling floor announced to providers, in ms: how often the definitions cache looks for changes. */
  minPollingIntervalMs: number
  streams: DefinitionEventStreams
}

/** Seconds a hidden page keeps its stream open (ADR 0008's default). */
const INACTIVITY_DELAY_SEC = 120

/** The key from X-API-Key or a Bearer header; EventSource can send neither, so the stream also takes `?token=`. */
function apiKeyOf(ctx: Context): string | undefined {
  const key =
    ctx.get('X-API-Key').trim() ||
    (ctx.path.endsWith('/events') && typeof ctx.query.token === 'string' ? ctx.query.token : '')
  if (key) return key
  const match = /^bearer\s+(.+)$/i.exec(ctx.get('Authorization'))
  return match?.[1].trim()
}

async function authenticate(ctx: Context, deps: OfrepRouteDeps): Promise<Project> {
  const key = apiKeyOf(ctx)
  if (!key)
    throw new OfrepError(401, 'GENERAL', 'send the project API key (phc_…) in X-API-Key or Authorization: Bearer')
  const project = await deps.projects.byApiToken(key)
  if (!project) throw new OfrepError(401, 'GENERAL', 'the project API key is not valid: no project has this key')
  ctx.state.projectId = project.id
  const retryAfter = deps.rateLimiter?.take(project.id, 1)
  if (retryAfter !== undefined) {
    ctx.set('Retry-After', String(retryAfter))
    throw new OfrepError(
      429,
      'GENERAL',
      `this project evaluates flags faster than its rate limit; retry in ${retryAfter} s`,
    )
  }
  return project
}

async function contextOf(ctx: Context, http: HttpKit, limits: PayloadLimits): Promise<ContextRequest> {
  const text = await http.readPayload(ctx, limits, true)
  let body: unknown = {}
  if (text !== undefined && text.trim() !== '') {
    try {
      body = JSON.parse(text)
    } catch (error) {
      throw new OfrepError(400, 'PARSE_ERROR', `the body is not valid JSON: ${(error as Error).message}`)
    }
  }
  return readContext(body)
}

function evaluate(flags: FlagsService, project: Project, request: ContextRequest, flagKeys: string[] | null) {
  return flags.evaluate(project, {
    distinctId: request.distinctId ?? '',
    personProperties: request.personProperties,
    groups: request.groups,
    groupProperties: request.groupProperties,
    flagKeys,
    runtime: 'all',
    ip: request.ip,
  })
}

/** Every live flag's OFREP answer for the context, in key order. */
async function evaluateAll(
  deps: OfrepRouteDeps,
  project: Project,
  request: ContextRequest,
): Promise<Array<OfrepSuccess | OfrepFailure>> {
  const definitions = await deps.flags.definitions(project.id)
  const live = definitions.flagDocuments
    .filter((flag) => !flag.deleted)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const result = await evaluate(deps.flags, project, request, null)
  return live.map((flag) => answerFor(flag, request, result.flags[flag.key]))
}

function answerFor(
  flag: FlagDocument,
  request: ContextRequest,
  result: Parameters<typeof toOfrep>[1] | undefined,
): OfrepSuccess | OfrepFailure {
  if (!flag.active) return disabled(flag)
  if (request.distinctId === null && needsTargetingKey(flag)) return missingKey(flag)
  if (!result) return { key: flag.key, errorCode: 'GENERAL', errorDetails: 'the flag was not evaluated' }
  return toOfrep(flag, result)
}

/**
 * Over what a client acts on (value, variant, reason, error, payload), not the flags' version or
 * ids: a change that leaves this context's answers as they are is a 304.
 */
function etagOf(flags: Array<OfrepSuccess | OfrepFailure>): string {
  const answers = flags.map((f) =>
    'errorCode' in f ? [f.key, f.errorCode] : [f.key, f.value, f.variant ?? null, f.reason, f.metadata.payload ?? null],
  )
  return `"${createHash('sha1').update(JSON.stringify(answers)).digest('base64url')}"`
}

/** OFREP's error bodies; anything else that fails is a 500 with `errorDetails`. */
function ofrepErrors(withKey: boolean) {
  return async (ctx: Context, next: () => Promise<void>) => {
    try {
      await next()
    } catch (error) {
      if (error instanceof OfrepError) {
        ctx.status = error.status
        ctx.body =
          error.status === 401 || error.status === 429
            ? { errorDetails: error.message }
            : { ...(withKey && { key: ctx.params.key }), errorCode: error.errorCode, errorDetails: error.message }
      } else if (error instanceof HttpError && error.status < 500) {
        ctx.status = error.status
        ctx.body = { errorCode: 'GENERAL', errorDetails: error.detail }
      } else throw error
    }
  }
}

export function mountOfrepRoutes(router: Router, deps: OfrepRouteDeps): void {
  router.post('/ofrep/v1/evaluate/flags/:key', crossOrigin, ofrepErrors(true), async (ctx) => {
    const project = await authenticate(ctx, deps)
    const request = await contextOf(ctx, deps.http, deps.limits)
    const key = ctx.params.key
    const flag = (await deps.flags.definitions(project.id)).flagByKey(key)
    if (!flag) throw new OfrepError(404, 'FLAG_NOT_FOUND', `no flag has the key ${key}`)
    const needsEvaluation = flag.active && !(request.distinctId === null && needsTargetingKey(flag))
    const answer = answerFor(
      flag,
      request,
      needsEvaluation ? (await evaluate(deps.flags, project, request, [key])).flags[key] : undefined,
    )
    if ('errorCode' in answer) {
      ctx.status = answer.errorCode === 'TARGETING_KEY_MISSING' ? 400 : 500
      ctx.body = answer
      return
    }
    ctx.body = answer
  })

  router.post('/ofrep/v1/evaluate/flags', crossOrigin, ofrepErrors(false), async (ctx) => {
    const project = await authenticate(ctx, deps)
    const request = await contextOf(ctx, deps.http, deps.limits)
    const flags = await evaluateAll(deps, project, request)
    const etag = etagOf(flags)
    ctx.set('ETag', etag)
    ctx.set('Cache-Control', 'no-cache')
    ctx.set('Access-Control-Expose-Headers', 'ETag')
    if (
      ctx
        .get('If-None-Match')
        .split(',')
        .some((tag) => tag.trim() === etag)
    ) {
      ctx.status = 304
      return
    }
    const stream = {
      type: 'sse',
      endpoint: { requestUri: `/ofrep/v1/events?token=${encodeURIComponent(project.apiToken)}` },
      inactivityDelaySec: INACTIVITY_DELAY_SEC,
    }
    ctx.type = 'application/json'
    ctx.body = JSON.stringify({ flags, eventStreams: [stream] })
  })

  router.get('/ofrep/v1/events', crossOrigin, ofrepErrors(false), async (ctx) => {
    const project = await authenticate(ctx, deps)
    const lastEventId =
      ctx.get('Last-Event-ID') || (typeof ctx.query.lastEventId === 'string' ? ctx.query.lastEventId : undefined)
    ctx.respond = false
    await deps.streams.open(project.id, ctx.res, lastEventId || undefined)
  })

  router.get('/ofrep/v1/configuration', crossOrigin, ofrepErrors(false), async (ctx) => {
    await authenticate(ctx, deps)
    ctx.body = {
      name: 'Hedgerow',
      capabilities: {
        cacheInvalidation: { polling: { enabled: true, minPollingIntervalMs: deps.minPollingIntervalMs } },
        flagEvaluation: { supportedTypes: ['boolean', 'string', 'int', 'float', 'object'] },
        caching: { enabled: false },
      },
    }
  })
}
