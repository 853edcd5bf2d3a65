/**
 * Remote config for posthog-js: `GET /array/:token/config` (JSON) and `/array/:token/config.js`,
 * the script form the browser SDK loads first. The script assigns the config to
 * `window._POSTHOG_REMOTE_CONFIG[token]`, which is where posthog-js reads it. Only the features
 * this service serves are switched on: capture (at /i/v0/e/) and flags.
 */
import type Router from '@koa/router'
import type { Context } from 'koa'
import type { Project, ProjectLookup } from '../../../core/plugin-api.ts'
import { crossOrigin, httpError } from '../../../core/plugin-api.ts'
import type { FlagsService } from '../service.ts'

export function remoteConfig(project: Project, hasFeatureFlags: boolean): Record<string, unknown> {
  return {
    token: project.apiToken,
    supportedCompression: ['gzip', 'gzip-js'],
    hasFeatureFlags,
    captureDeadClicks: false,
    capturePerformance: false,
    autocapture_opt_out: false,
    autocaptureExceptions: false,
    analytics: { endpoint: '/i/v0/e/' },
    elementsChainAsString: true,
    sessionRecording: false,
    heatmaps: false,
    surveys: false,
    defaultIdentifiedOnly: true,
    siteApps: [],
  }
}

/** JSON that is also safe inside a script: `<`, U+2028 and U+2029 are escaped. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

export function remoteConfigScript(config: Record<string, unknown>, token: string): string {
  return [
    '(function() {',
    '  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};',
    `  window._POSTHOG_REMOTE_CONFIG[${scriptJson(token)}] = { config: ${scriptJson(config)}, siteApps: [] };`,
    '})();',
    '',
  ].join('\n')
}

export function mountRemoteConfig(router: Router, projects: ProjectLookup, flags: FlagsService): void {
  const configFor = async (ctx: Context) => {
    const project = await projects.byApiToken(String(ctx.params.token))
    // posthog-js falls back to /flags on a 404, as it does against PostHog for an unknown key
    if (!project) throw httpError('not_found', 'no project has this API key', 'token')
    ctx.state.projectId = project.id
    const definitions = await flags.definitions(project.id)
    ctx.set('Cache-Control', 'public, max-age=60')
    return remoteConfig(project, definitions.hasActiveFlags)
  }
  // posthog-js loads its remote config cross-origin
  router.get('/array/:token/config', crossOrigin, async (ctx) => {
    ctx.body = await configFor(ctx)
  })
  router.get('/array/:token/config.js', crossOrigin, async (ctx) => {
    const config = await configFor(ctx)
    ctx.type = 'application/javascript; charset=utf-8'
    ctx.body = remoteConfigScript(config, String(ctx.params.token))
  })
}
