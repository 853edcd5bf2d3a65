/**
 * CORS in two classes of route.
 *
 * Routes browsers must reach cross-origin (capture, /flags and /decide, remote config, the SDK's
 * static files) are marked with `crossOrigin` as their first handler and stay permissive, as
 * PostHog's are: posthog-js posts with credentials, so the Origin is echoed (a wildcard is not
 * allowed with credentials), and a request without an Origin gets `*`.
 *
 * Every other route (admin /api/*, /flags/definitions, local evaluation, health and metrics)
 * answers cross-origin only to the origins in `server.adminCorsOrigins`, and to no one when that
 * list is empty. They take a key in a header today, which a page on another origin cannot send
 * without a preflight; but one proxy that adds a cookie or Basic auth in front of them would turn
 * an echoed Origin with credentials into any website reading them with the operator's browser.
 *
 * Preflights (OPTIONS) are answered here, before routing, so the class of an OPTIONS request is
 * read from the router: the path is cross-origin when a route at it starts with `crossOrigin`.
 */
import type Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import { CROSS_ORIGIN, grantCrossOrigin } from '../plugin-api.ts'

export interface CorsOptions {
  /** Origins (`scheme://host[:port]`) granted cross-origin access with credentials to the other routes. */
  readonly adminOrigins: readonly string[]
}

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS'

/** `crossOrigin` lives in the plugin contract, so that a third party's routes can be marked too. */
export { crossOrigin } from '../plugin-api.ts'
function isCrossOriginPath(router: Router, path: string): boolean {
  return router
    .match(path, 'GET')
    .path.some((layer) =>
      (layer.stack as unknown as Array<Record<symbol, unknown>>).some((handler) => handler[CROSS_ORIGIN] === true),
    )
}

export function cors(router: Router, options: CorsOptions): Middleware {
  const adminOrigins = new Set(options.adminOrigins)
  /** The other routes: granted only to a configured origin. */
  function grantConfigured(ctx: Context): boolean {
    const origin = ctx.get('Origin')
    if (!origin) return false
    // The answer differs by Origin, so a cache in front must key on it.
    ctx.vary('Origin')
    if (!adminOrigins.has(origin)) return false
    grantCrossOrigin(ctx)
    return true
  }

  return function corsHeaders(ctx, next) {
    if (ctx.method !== 'OPTIONS') {
      // A cross-origin route's own `crossOrigin` handler replaces these headers.
      grantConfigured(ctx)
      return next()
    }
    const granted = isCrossOriginPath(router, ctx.path) ? (grantCrossOrigin(ctx), true) : grantConfigured(ctx)
    if (granted) {
      ctx.set('Access-Control-Allow-Methods', ALLOWED_METHODS)
      ctx.set(
        'Access-Control-Allow-Headers',
        ctx.get('Access-Control-Request-Headers') || 'Content-Type, Authorization',
      )
      ctx.set('Access-Control-Max-Age', '86400')
    }
    ctx.status = 200
    ctx.body = ctx.get('Access-Control-Request-Method') ? '' : { status: 1 }
    return Promise.resolve()
  }
}
