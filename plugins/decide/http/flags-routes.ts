/**
 * `/flags`, `/flags/`, `/decide` and `/decide/`, GET and POST, one handler: decode the body as
 * capture does (gzip, lz64, base64, form `data=`), find the project by its key (401), read the
 * fields (400), evaluate, and answer in the shape the path and `v` ask for.
 */
import { randomUUID } from 'node:crypto'
import type Router from '@koa/router'
import type { Context } from 'koa'
import type { HttpKit, PayloadLimits, Project, ProjectLookup } from '../../../core/plugin-api.ts'
import { HttpError, crossOrigin, httpError } from '../../../core/plugin-api.ts'
import { detectEvaluationRuntime, normalizeDistinctId } from '../evaluator/index.ts'
import type { EvaluationResult } from '../evaluator/index.ts'
import type { FlagsRequest, FlagsService } from '../service.ts'
import { parseFlagsJson, readFlagsBody, tokenOf } from './flags-request.ts'
import type { FlagsBodyFields } from './flags-request.ts'
import { decideFields, shapeFor } from './responses.ts'
import { flagsResponseBuffer } from './response-json.ts'
import { remoteConfig } from './remote-config.ts'

export const FLAGS_PATHS = ['/flags', '/flags/', '/decide', '/decide/'] as const

export interface FlagsRouteDeps {
  projects: ProjectLookup
  http: HttpKit
  flags: FlagsService
  limits: PayloadLimits
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

const NO_FLAGS: EvaluationResult = { flags: {}, answers: [], errorsWhileComputingFlags: false }

/** The request's JSON object; a GET with neither body nor `data=` is read as an empty object. */
async function requestObject(ctx: Context, http: HttpKit, limits: PayloadLimits): Promise<Record<string, unknown>> {
  const text = await http.readPayload(ctx, limits, true)
  return text === undefined ? {} : parseFlagsJson(text)
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)

/** The headers detectEvaluationRuntime reads, each as one string (not a copy of every header). */
function runtimeHeaders(ctx: Context): Record<string, string | undefined> {
  const headers = ctx.headers
  return {
    'user-agent': first(headers['user-agent']),
    origin: first(headers.origin),
    referer: first(headers.referer),
    'sec-fetch-mode': first(headers['sec-fetch-mode']),
    'sec-fetch-site': first(headers['sec-fetch-site']),
  }
}

function flagsRequest(fields: FlagsBodyFields, ctx: Context, query: Record<string, string | undefined>): FlagsRequest {
  const anon = fields.anon_distinct_id
  return {
    distinctId: fields.distinct_id,
    groups: fields.groups ?? null,
    personProperties: fields.person_properties ?? null,
    groupProperties: fields.group_properties ?? null,
    anonDistinctId: anon === null || anon === undefined ? null : normalizeDistinctId(anon),
    deviceId: fields.device_id ?? null,
    flagKeys: fields.flag_keys ?? null,
    runtime: detectEvaluationRuntime(runtimeHeaders(ctx), fields.evaluation_runtime ?? null),
    evaluationContexts: fields.evaluation_contexts ?? null,
    onlySurveyFlags: query.only_evaluate_survey_feature_flags === 'true',
    ip: fields.geoip_disable === true ? undefined : ctx.ip || undefined,
  }
}

/** `?config=true`: the remote config fields posthog-js reads alongside the flags. */
async function configFields(project: Project, flags: FlagsService): Promise<Record<string, unknown>> {
  const { token: _token, ...fields } = remoteConfig(project, (await flags.definitions(project.id)).hasActiveFlags)
  return fields
}

export function mountFlagsRoutes(router: Router, { projects, http, flags, limits }: FlagsRouteDeps): void {
  async function flagsEndpoint(ctx: Context): Promise<void> {
    const query = http.query(ctx)
    const body = await requestObject(ctx, http, limits)
    const token = tokenOf(body, query)
    if (!token)
      throw httpError('no_api_key', 'No API token provided: send the project API key as token or api_key', 'token')
    const project = await projects.byApiToken(token)
    if (!project) throw httpError('invalid_api_key', 'The provided API key is invalid or has expired', 'token')
    ctx.state.projectId = project.id
    const fields = readFlagsBody(body)
    const shape = shapeFor(ctx.path, query.v)
    const parts = { requestId: randomUUID(), evaluatedAt: Date.now() }
    let result = NO_FLAGS
    if (fields.disable_flags !== true) {
      try {
        result = await flags.evaluate(project, flagsRequest(fields, ctx, query))
      } catch (error) {
        if (error instanceof HttpError) throw error
        // the evaluator answers per-flag errors itself: what escapes is storage (the definitions could not be loaded)
        throw Object.assign(httpError('unavailable', 'the flags could not be evaluated; retry'), { cause: error })
      }
    }
    const isDecide = ctx.path.startsWith('/decide')
    const config = !isDecide && query.config === 'true' ? await configFields(project, flags) : {}
    // what `ctx.type = 'application/json'` sets, without its MIME lookup; a Buffer body is encoded
    // once, where Koa measures a string body's UTF-8 length and node:http then encodes it again
    ctx.set('Content-Type', JSON_CONTENT_TYPE)
    ctx.body = flagsResponseBuffer({ ...(isDecide ? decideFields() : {}), ...config }, shape, result, parts)
  }
  // posthog-js asks for flags cross-origin
  for (const path of FLAGS_PATHS) router.get(path, crossOrigin, flagsEndpoint).post(path, crossOrigin, flagsEndpoint)
}
