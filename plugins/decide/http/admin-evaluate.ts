/**
 * `POST /api/projects/:id/feature_flags/evaluate`: a dry run of /flags for one distinct id, with
 * the stored person and groups read as /flags reads them, answering for every flag its value,
 * payload and reason, each condition set's verdict (evaluator/explain.ts), and where every
 * property the flags were matched against came from. It changes nothing and records nothing.
 */
import { isIP } from 'node:net'
import type Router from '@koa/router'
import { Type } from 'typebox'
import { httpError, parseWith } from '../../../core/plugin-api.ts'
import type { Properties } from '../evaluator/index.ts'
import type { PropertySource } from '../service.ts'
import { route } from './admin-common.ts'
import type { AdminDeps } from './admin-common.ts'

const Json = Type.Record(Type.String(), Type.Unknown())

const EvaluateBody = Type.Object(
  {
    distinct_id: Type.Union([Type.String({ maxLength: 400 }), Type.Number()]),
    person_properties: Type.Optional(Json),
    groups: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]))),
    group_properties: Type.Optional(Type.Record(Type.String(), Json)),
    ip: Type.Optional(Type.String({ maxLength: 64 })),
    device_id: Type.Optional(Type.String({ maxLength: 400 })),
    flag_keys: Type.Optional(Type.Array(Type.String(), { maxItems: 10_000 })),
    /** As an SDK of that runtime would be answered; default `all` (every flag). */
    evaluation_runtime: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Literal('client'), Type.Literal('server')]),
    ),
  },
  { additionalProperties: false },
)

/** `{key: {value, source}}`, keys in the order the evaluator merged them. */
function withSources(properties: Properties, sources: Record<string, PropertySource>) {
  const listed: Record<string, { value: unknown; source: PropertySource }> = {}
  for (const [key, value] of Object.entries(properties)) listed[key] = { value, source: sources[key] ?? 'derived' }
  return listed
}

export function mountEvaluateRoute(router: Router, { http, flags, bodyLimit }: AdminDeps): void {
  route(router, http, 'post', '/api/projects/:id/feature_flags/evaluate', async (ctx) => {
    const project = await http.projectParam(ctx)
    const body = parseWith(EvaluateBody, await http.readJson(ctx, bodyLimit))
    if (body.ip !== undefined && isIP(body.ip) === 0)
      throw httpError('invalid_input', `ip: "${body.ip}" is not an IPv4 or IPv6 address`, 'ip')
    const explained = await flags.explain(project, {
      distinctId: body.distinct_id,
      personProperties: body.person_properties ?? null,
      groups: body.groups ?? null,
      groupProperties: (body.group_properties as Record<string, Properties> | undefined) ?? null,
      ip: body.ip,
      deviceId: body.device_id ?? null,
      flagKeys: body.flag_keys ?? null,
      runtime: body.evaluation_runtime ?? 'all',
    })
    ctx.body = {
      distinct_id: String(body.distinct_id),
      stored_person: explained.storedPerson,
      properties: {
        person: withSources(explained.person, explained.personSources),
        groups: Object.fromEntries(
          Object.entries(explained.groups).map(([name, properties]) => [
            name,
            withSources(properties, explained.groupSources[name] ?? {}),
          ]),
        ),
      },
      flags: explained.flags,
      errors_while_computing_flags: explained.errorsWhileComputingFlags,
    }
  })
}
