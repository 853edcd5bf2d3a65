/**
 * Permissive CORS on every route, as PostHog's capture does: browsers post events and call flags
 * cross-origin with credentials, so the Origin is echoed (a wildcard is not allowed with credentials).
 */
import type { Middleware } from 'koa'

export function cors(): Middleware {
  // not async: it only waits for what follows, and an async wrapper was one more promise per request
  return function corsHeaders(ctx, next) {
    const origin = ctx.get('Origin')
    if (origin) {
      ctx.set('Access-Control-Allow-Origin', origin)
      ctx.set('Access-Control-Allow-Credentials', 'true')
      ctx.vary('Origin')
    } else {
      ctx.set('Access-Control-Allow-Origin', '*')
    }
    if (ctx.method !== 'OPTIONS') return next()
    ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS')
    ctx.set('Access-Control-Allow-Headers', ctx.get('Access-Control-Request-Headers') || 'Content-Type, Authorization')
    ctx.set('Access-Control-Max-Age', '86400')
    ctx.status = 200
    ctx.body = ctx.get('Access-Control-Request-Method') ? '' : { status: 1 }
    return Promise.resolve()
  }
}
