/**
 * What server-side SDKs fetch for local evaluation (capture.md §3.3):
 * - `GET /flags/definitions?token=<project key>&send_cohorts` (posthog-node ≥ 5.29.4, posthog-python)
 * - `GET /api/feature_flag/local_evaluation?token=…&send_cohorts` (older SDKs)
 * both with `Authorization: Bearer <project secret key or admin key>`, answering
 * `{flags, group_type_mapping, cohorts}` with a weak ETag and 304 on a matching If-None-Match;
 * - `GET /api/projects/@current/feature_flags/:key/remote_config?token=…` → the flag's payload
 *   (posthog-node's `getRemoteConfigPayload`).
 * The two /api paths are authenticated by the core (admin key, or the secret key it accepts there,
 * which sets `ctx.state.authProject`); /flags/definitions is outside /api and checked here.
 */
import type Router from '@koa/router'
import type { Context } from 'koa'
import type { PluginApi, Project } from '../../../core/plugin-api.ts'
import { httpError } from '../../../core/plugin-api.ts'
import type { FlagsService } from '../service.ts'

async function projectOfToken(api: PluginApi, token: string | undefined): Promise<Project> {
  if (!token) throw httpError('missing_token', 'the project API key is required as ?token=', 'token')
  const project = await api.projects.byApiToken(token)
  if (!project) throw httpError('invalid_api_key', 'no project has this API key', 'token')
  return project
}

/** /flags/definitions: the project of `token`, if the Bearer key is its secret key or the admin key. */
async function definitionsProject(api: PluginApi, ctx: Context): Promise<Project> {
  const key = api.http.bearerToken(ctx)
  if (!key)
    throw httpError(
      'not_authenticated',
      'Authentication credentials were not provided: send Authorization: Bearer <project secret key>',
    )
  const project = await projectOfToken(api, api.http.query(ctx).token)
  if (!api.http.keysEqual(key, project.secretApiToken) && !api.isAdminKey(key)) {
    throw httpError('authentication_failed', "the key is not this project's secret key")
  }
  return project
}

/** /api paths: the secret key's own project (a token naming another one is refused), or any project for the admin key. */
async function apiProject(api: PluginApi, ctx: Context): Promise<Project> {
  const token = api.http.query(ctx).token
  const authProject = ctx.state.authProject as Project | undefined
  if (!authProject) return projectOfToken(api, token)
  if (token !== undefined && token !== authProject.apiToken)
    throw httpError('authentication_failed', "the key is not this project's secret key", 'token')
  return authProject
}

export function mountDefinitionsRoutes(router: Router, api: PluginApi, flags: FlagsService): void {
  const answer = async (ctx: Context, project: Project) => {
    ctx.state.projectId = project.id
    const { json, etag } = (await flags.definitions(project.id)).sdkBody()
    ctx.set('ETag', etag)
    ctx.set('Cache-Control', 'private, must-revalidate')
    ctx.vary('Authorization')
    const given = ctx.get('If-None-Match')
    if (given?.split(',').some((tag) => tag.trim() === etag || tag.trim() === etag.slice(2))) {
      ctx.status = 304
      return
    }
    ctx.type = 'application/json'
    ctx.body = ctx.method === 'HEAD' ? '' : json
  }

  for (const path of ['/flags/definitions', '/flags/definitions/']) {
    router.get(path, async (ctx) => answer(ctx, await definitionsProject(api, ctx)))
  }
  for (const path of ['/api/feature_flag/local_evaluation', '/api/feature_flag/local_evaluation/']) {
    router.get(path, async (ctx) => answer(ctx, await apiProject(api, ctx)))
  }

  router.get('/api/projects/:id/feature_flags/:key/remote_config', async (ctx) => {
    const project = await apiProject(api, ctx)
    if (ctx.params.id !== '@current' && ctx.params.id !== String(project.id))
      throw httpError('not_found', `project ${ctx.params.id} is not the project of this key`, 'id')
    ctx.state.projectId = project.id
    const flag = (await flags.definitions(project.id)).flagByKey(String(ctx.params.key))
    if (!flag) throw httpError('not_found', `no feature flag with key ${ctx.params.key}`, 'key')
    const payloads = flag.filters.payloads
    const payload = payloads && Object.hasOwn(payloads, 'true') ? payloads.true : null
    ctx.type = 'application/json'
    ctx.body = JSON.stringify(payload ?? null)
  })
}
