import { expect } from 'chai'
import type Router from '@koa/router'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { defaultPlugins } from '../helpers/default-plugins.ts'
import { SECRET_KEY_PATHS } from '../../../core/admin/routes.ts'

/**
 * Routes outside /api that answer without the admin key. A new public route must be added here
 * on purpose; everything else the router holds is walked and must refuse a missing or wrong key.
 */
const PUBLIC_ROUTES = [
  /^\/_(health|readiness|metrics)$/,
  /^\/(i\/v0\/e|batch|e|capture|track|engage)\/?$/,
  /^\/i\/v1\/analytics\/events$/,
  /^\/ofrep\/v1\//,
  /^\/(flags|decide)\/?$/,
  /^\/array\//,
  /^\/static\//,
  // the console's page and modules: public files only; every datum it shows comes from /api with the key
  /^\/$/,
  /^\/console(\/|$)/,
]

/** Routes outside /api that serve secret data: walked with the same bad keys as /api. */
const KEY_GUARDED_ROUTES = [/^\/flags\/definitions\/?$/]

interface RouteLayer {
  path: string | RegExp
  methods: string[]
}

function routerOf(t: TestService): Router {
  const dispatch = t.service.app.middleware.find((m) => (m as { router?: unknown }).router !== undefined) as
    | { router: Router }
    | undefined
  if (!dispatch) throw new Error('the app has no @koa/router middleware')
  return dispatch.router
}

/** Every (method, concrete path) the router serves, params filled with a plausible value. */
function routesOf(router: Router): Array<{ method: string; path: string; pattern: string }> {
  const out: Array<{ method: string; path: string; pattern: string }> = []
  for (const layer of router.stack as unknown as RouteLayer[]) {
    if (typeof layer.path !== 'string' || layer.methods.length === 0) continue
    const concrete = layer.path.replace(/:(\w+)(\([^)]*\))?[?*+]?/g, (_m, name: string) =>
      name === 'id' || name.endsWith('Id') ? '1' : 'x',
    )
    for (const method of layer.methods) if (method !== 'HEAD') out.push({ method, path: concrete, pattern: layer.path })
  }
  return out
}

describe('admin routes (walked from the router)', function () {
  this.timeout(60_000)
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: defaultPlugins() })
  })
  after(async () => t?.close())

  it('holds admin routes to walk, and every route outside /api is on the public list', () => {
    const routes = routesOf(routerOf(t))
    expect(routes.filter((r) => r.path.startsWith('/api/')).length).to.be.greaterThan(5)
    const unlisted = routes.filter(
      (r) => !r.path.startsWith('/api/') && ![...PUBLIC_ROUTES, ...KEY_GUARDED_ROUTES].some((p) => p.test(r.path)),
    )
    expect(
      unlisted.map((r) => `${r.method} ${r.pattern}`),
      'routes that answer without the admin key',
    ).to.deep.equal([])
  })

  it('refuses a missing, wrong, malformed or project key with 401 on every /api and key-guarded route', async () => {
    const routes = routesOf(routerOf(t)).filter(
      (r) => r.path.startsWith('/api/') || KEY_GUARDED_ROUTES.some((p) => p.test(r.path)),
    )
    const headers: Array<Record<string, string>> = [
      {},
      { Authorization: 'Bearer wrong-key-0123456789' },
      { Authorization: `Bearer ${t.adminKey}x` },
      { Authorization: t.adminKey },
      { Authorization: `Basic ${Buffer.from(`${t.adminKey}:`).toString('base64')}` },
      { Authorization: `Bearer ${t.project.api_token}` },
    ]
    let checked = 0
    for (const route of routes) {
      const secretAllowed =
        SECRET_KEY_PATHS.some((p) => p.test(route.path)) || KEY_GUARDED_ROUTES.some((p) => p.test(route.path))
      const withSecret = secretAllowed ? [] : [{ Authorization: `Bearer ${t.project.secret_api_token}` }]
      const query = route.path.startsWith('/flags/') ? `?token=${t.project.api_token}` : ''
      for (const h of [...headers, ...withSecret]) {
        const body = ['POST', 'PUT', 'PATCH'].includes(route.method) ? '{}' : undefined
        const response = await fetch(t.url + route.path + query, {
          method: route.method,
          headers: { ...h, 'Content-Type': 'application/json' },
          body,
        })
        const json = (await response.json()) as { type?: string }
        expect(response.status, `${route.method} ${route.path} with ${JSON.stringify(h)}`).to.equal(401)
        expect(json.type).to.equal('authentication_error')
        checked += 1
      }
    }
    expect(checked).to.be.greaterThan(30)
  })

  it("refuses another project's secret key for a project's flag definitions", async () => {
    const other = (await (await t.admin('POST', '/api/projects', { name: 'other' })).json()) as {
      secret_api_token: string
    }
    const response = await fetch(`${t.url}/flags/definitions?token=${t.project.api_token}`, {
      headers: { Authorization: `Bearer ${other.secret_api_token}` },
    })
    expect(response.status).to.equal(401)
    const own = await fetch(`${t.url}/flags/definitions?token=${t.project.api_token}`, {
      headers: { Authorization: `Bearer ${t.project.secret_api_token}` },
    })
    expect(own.status).to.equal(200)
  })

  it('accepts the admin key on the same routes (the walk reaches real handlers, not a blanket 401)', async () => {
    const response = await t.admin('GET', `/api/projects/${t.project.id}`)
    expect(response.status).to.equal(200)
  })
})
