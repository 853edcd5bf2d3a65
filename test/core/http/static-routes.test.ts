import { expect } from 'chai'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import Koa from 'koa'
import type { Context } from 'koa'
import Router from '@koa/router'
import { staticRoutes, staticTable } from '../../../core/http/static-routes.ts'

/** What a handler sees of the routing, and what it answers. */
function describeRouting(ctx: Context): void {
  const routed = ctx as Context & {
    matched?: { path: unknown }[]
    _matchedRoute?: unknown
    routerPath?: unknown
    routerName?: unknown
    captures?: unknown
    routeMatched?: unknown
  }
  ctx.body = {
    method: ctx.method,
    params: ctx.params,
    requestParams: (ctx.request as { params?: unknown }).params,
    matched: routed.matched?.map((layer) => String(layer.path)),
    matchedRoute: String(routed._matchedRoute),
    routerPath: routed.routerPath,
    routerName: routed.routerName ?? null,
    captures: routed.captures,
    routeMatched: routed.routeMatched,
    sawMiddleware: ctx.state.sawMiddleware ?? false,
  }
}

/** The same routes on a fresh router: static paths, two methods on one path, a named route, a parameter, a path middleware. */
function routes(): Router {
  const router = new Router()
  router.get('/flags', describeRouting).post('/flags', describeRouting)
  router.post('/flags/', describeRouting)
  router.post('named', '/named', describeRouting)
  router.get('/api/projects/:id', describeRouting)
  router.use('/guarded', async (ctx, next) => {
    ctx.state.sawMiddleware = true
    await next()
  })
  router.get('/guarded', describeRouting)
  router.post('/two-handlers', async (_ctx, next) => next(), describeRouting)
  return router
}

async function listen(useTable: boolean): Promise<{ url: string; server: Server }> {
  const app = new Koa()
  const router = routes()
  app.use(useTable ? staticRoutes(router) : router.routes())
  app.use(router.allowedMethods())
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

describe('staticRoutes', () => {
  let table: { url: string; server: Server }
  let router: { url: string; server: Server }
  before(async () => {
    table = await listen(true)
    router = await listen(false)
  })
  after(() => {
    table.server.close()
    router.server.close()
  })

  const requests: [string, string][] = [
    ['GET', '/flags'],
    ['POST', '/flags'],
    ['HEAD', '/flags'],
    ['POST', '/flags/'],
    ['POST', '/FLAGS'],
    ['GET', '/flags/'],
    ['PUT', '/flags'],
    ['OPTIONS', '/flags'],
    ['POST', '/named'],
    ['GET', '/api/projects/42'],
    ['GET', '/guarded'],
    ['POST', '/two-handlers'],
    ['GET', '/nowhere'],
  ]

  it('answers every request exactly as the router alone does: status, Allow header and the routing fields handlers see', async () => {
    for (const [method, path] of requests) {
      const [ours, theirs] = await Promise.all([
        fetch(table.url + path, { method }),
        fetch(router.url + path, { method }),
      ])
      const label = `${method} ${path}`
      expect(ours.status, label).to.equal(theirs.status)
      expect(ours.headers.get('allow'), label).to.equal(theirs.headers.get('allow'))
      expect(await ours.text(), label).to.equal(await theirs.text())
    }
  })

  it('tables the route paths without parameters', () => {
    expect([...staticTable(routes()).keys()].sort()).to.deep.equal([
      'GET /flags',
      'GET /guarded',
      'HEAD /flags',
      'HEAD /guarded',
      'POST /flags',
      'POST /flags/',
      'POST /named',
      'POST /two-handlers',
    ])
  })

  it('hands a tabled route the routing fields the router sets', async () => {
    const body = (await (await fetch(`${table.url}/flags`, { method: 'POST' })).json()) as Record<string, unknown>
    expect(body).to.deep.equal({
      method: 'POST',
      params: {},
      requestParams: {},
      matched: ['/flags', '/flags'],
      matchedRoute: '/flags',
      routerPath: '/flags',
      routerName: null,
      captures: [],
      routeMatched: true,
      sawMiddleware: false,
    })
  })
})
