/**
 * The router's middleware with a table in front for the paths without parameters: a request whose
 * method and path are exactly a route's runs the layers the router would run for it, with the
 * context fields @koa/router sets, without asking the router; any other request goes through the
 * router. @koa/router tests every layer's regular expression per request, then composes the
 * matched handlers anew, a visible share of a flags request's CPU in bench profiles.
 *
 * The table is built when this is called, after all routes are mounted, by asking the router
 * itself what each exact (method, route path) matches, so the table runs what the router would.
 */
import type Router from '@koa/router'
import type { Middleware, Next, ParameterizedContext } from 'koa'

type Layer = Router['stack'][number]

interface Step {
  layer: Layer
  handler: Middleware
  /** The layer's first handler: the router sets the routing fields before it. */
  first: boolean
  captures: string[]
}

interface StaticRoute {
  /** Every layer whose path matches, whatever its methods (what the router leaves in `ctx.matched`). */
  matched: Layer[]
  /** The router's matched route: the last matching layer that has methods. */
  route: Layer
  steps: Step[]
}

/** Context fields @koa/router sets on a routed request (its own typing does not list them all). */
interface RoutedContext {
  matched?: Layer[]
  router?: Router
  routeMatched?: boolean
  captures?: string[]
  params?: Record<string, string>
  routerPath?: string
  routerName?: string
  _matchedRoute?: string | RegExp
  _matchedRouteName?: string
}

/** (method + ' ' + path) → what the router runs for it; exported for the tests. */
export function staticTable(router: Router): Map<string, StaticRoute> {
  const table = new Map<string, StaticRoute>()
  if (router.opts.host !== undefined || router.opts.routerPath !== undefined || router.opts.exclusive) return table
  for (const candidate of router.stack) {
    if (typeof candidate.path !== 'string' || candidate.paramNames.length > 0) continue
    const path = candidate.path
    for (const method of candidate.methods) {
      const key = `${method} ${path}`
      if (table.has(key)) continue
      const match = router.match(path, method)
      const layers = match.pathAndMethod
      if (!match.route || !layers.every((layer) => typeof layer.path === 'string' && layer.paramNames.length === 0))
        continue
      const steps = layers.flatMap((layer) =>
        (layer.stack as Middleware[]).map((handler, i) => ({
          layer,
          handler,
          first: i === 0,
          captures: layer.captures(path),
        })),
      )
      table.set(key, { matched: match.path, route: layers.findLast((layer) => layer.methods.length > 0)!, steps })
    }
  }
  return table
}

type Routed = ParameterizedContext & RoutedContext

/** The layer's routing fields, as the router's per-layer step sets them. */
function enter(ctx: Routed, step: Step): void {
  const { layer } = step
  ctx.captures = step.captures.slice()
  ctx.params = layer.params(ctx.path, ctx.captures, ctx.params) as Record<string, string>
  ;(ctx.request as { params?: Record<string, string> }).params = ctx.params
  ctx.routerPath = layer.path as string
  ctx.routerName = layer.name || undefined
  ctx._matchedRoute = layer.path
  if (layer.name) ctx._matchedRouteName = layer.name
}

function run(ctx: Routed, steps: readonly Step[], index: number, next: Next): Promise<unknown> {
  if (index === steps.length) return next()
  const step = steps[index]!
  if (step.first) enter(ctx, step)
  return Promise.resolve(step.handler(ctx, () => run(ctx, steps, index + 1, next)))
}

export function staticRoutes(router: Router): Middleware {
  const routed = router.routes() as unknown as Middleware
  const table = staticTable(router)
  // like router.routes(), the middleware carries its router (the admin-route walk reads it)
  return Object.assign(
    function routeRequest(ctx: ParameterizedContext, next: Next) {
      const context = ctx as Routed & { newRouterPath?: string }
      // the router routes on newRouterPath when an earlier middleware set one
      const found = context.newRouterPath ? undefined : table.get(`${ctx.method} ${ctx.path}`)
      if (found === undefined) return routed(ctx, next)
      context.matched = context.matched ? [...context.matched, ...found.matched] : found.matched.slice()
      context.router = router
      context.routeMatched = true
      context._matchedRoute = found.route.path
      if (found.route.name) context._matchedRouteName = found.route.name
      return run(context, found.steps, 0, next)
    },
    { router },
  )
}
