import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

const CONFIGURED = 'https://admin.example'
const OTHER = 'https://evil.example'

describe('CORS by class of route', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({
      server: { adminCorsOrigins: [CONFIGURED] },
      plugins: [
        { plugin: 'validate' },
        { plugin: 'decide' },
        { plugin: 'static-sdk' },
        { plugin: 'sink-mongo', required: true },
      ],
    })
  })
  after(() => t.close())

  interface Route {
    readonly name: string
    readonly path: () => string
    readonly method: 'GET' | 'POST'
    readonly body?: () => string
    readonly auth?: () => string
  }
  const capture: Route = {
    name: '/i/v0/e/ (capture)',
    path: () => '/i/v0/e/',
    method: 'POST',
    body: () => JSON.stringify({ api_key: t.project.api_token, event: 'e', distinct_id: 'cors' }),
  }
  const publicRoutes: Route[] = [
    capture,
    {
      name: '/batch',
      path: () => '/batch',
      method: 'POST',
      body: () => JSON.stringify({ api_key: t.project.api_token, batch: [{ event: 'e', distinct_id: 'cors' }] }),
    },
    {
      name: '/flags/',
      path: () => '/flags/?v=2',
      method: 'POST',
      body: () => JSON.stringify({ token: t.project.api_token, distinct_id: 'cors' }),
    },
    {
      name: '/decide/',
      path: () => '/decide/?v=4',
      method: 'POST',
      body: () => JSON.stringify({ token: t.project.api_token, distinct_id: 'cors' }),
    },
    {
      name: '/array/:token/config.js (remote config)',
      path: () => `/array/${t.project.api_token}/config.js`,
      method: 'GET',
    },
    { name: '/static/array.js (SDK)', path: () => '/static/array.js', method: 'GET' },
    {
      name: '/ofrep/v1/evaluate/flags (OpenFeature)',
      path: () => '/ofrep/v1/evaluate/flags',
      method: 'POST',
      body: () => '{"context":{"targetingKey":"cors"}}',
      auth: () => t.project.api_token,
    },
  ]
  const adminRoutes: Route[] = [
    { name: '/api/projects (admin)', path: () => '/api/projects', method: 'GET', auth: () => t.adminKey },
    {
      name: '/api/projects/:id/events (admin)',
      path: () => `/api/projects/${t.project.id}/events`,
      method: 'GET',
      auth: () => t.adminKey,
    },
    {
      name: '/flags/definitions (secret key)',
      path: () => `/flags/definitions?token=${t.project.api_token}`,
      method: 'GET',
      auth: () => t.project.secret_api_token,
    },
    {
      name: '/api/feature_flag/local_evaluation (secret key)',
      path: () => '/api/feature_flag/local_evaluation',
      method: 'GET',
      auth: () => t.project.secret_api_token,
    },
    { name: '/_health', path: () => '/_health', method: 'GET' },
    { name: '/nothing-here (no route)', path: () => '/nothing-here', method: 'GET' },
  ]

  const preflight = (route: Route, origin: string) =>
    fetch(t.url + route.path(), {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': route.method,
        'Access-Control-Request-Headers': 'content-type, authorization',
      },
    })
  const call = (route: Route, origin?: string) =>
    fetch(t.url + route.path(), {
      method: route.method,
      body: route.body?.(),
      headers: {
        ...(origin ? { Origin: origin } : {}),
        ...(route.auth ? { Authorization: `Bearer ${route.auth()}` } : {}),
      },
    })
  const cors = (response: Response) => ({
    status: response.status,
    origin: response.headers.get('access-control-allow-origin'),
    credentials: response.headers.get('access-control-allow-credentials'),
    methods: response.headers.get('access-control-allow-methods'),
  })

  for (const route of publicRoutes) {
    describe(`${route.method} ${route.name}: reached by browsers cross-origin`, () => {
      it('grants any origin a preflight with credentials', async () => {
        const answer = await preflight(route, OTHER)
        expect(cors(answer)).to.deep.equal({
          status: 200,
          origin: OTHER,
          credentials: 'true',
          methods: 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
        })
        expect(answer.headers.get('access-control-allow-headers')).to.equal('content-type, authorization')
      })

      it('echoes any origin with credentials, and answers * without one', async () => {
        const answer = await call(route, OTHER)
        expect(cors(answer)).to.deep.equal({ status: 200, origin: OTHER, credentials: 'true', methods: null })
        expect(answer.headers.get('vary')).to.match(/Origin/)
        expect(cors(await call(route))).to.deep.equal({ status: 200, origin: '*', credentials: null, methods: null })
      })
    })
  }

  it('a cross-origin route keeps its CORS headers on an error, so the browser SDK can read it', async () => {
    const answer = await fetch(`${t.url}/i/v0/e/`, {
      method: 'POST',
      headers: { Origin: OTHER },
      body: JSON.stringify({ api_key: 'phc_not_a_key', event: 'e', distinct_id: 'd' }),
    })
    expect(cors(answer)).to.deep.equal({ status: 401, origin: OTHER, credentials: 'true', methods: null })
  })

  for (const route of adminRoutes) {
    describe(`${route.method} ${route.name}: not for browsers`, () => {
      it('grants no preflight to an origin that is not configured, and one to the configured origin', async () => {
        const refused = await preflight(route, OTHER)
        expect(cors(refused)).to.deep.equal({ status: 200, origin: null, credentials: null, methods: null })
        expect(refused.headers.get('access-control-allow-headers')).to.equal(null)
        expect(refused.headers.get('access-control-max-age')).to.equal(null)
        expect(cors(await preflight(route, CONFIGURED))).to.deep.equal({
          status: 200,
          origin: CONFIGURED,
          credentials: 'true',
          methods: 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
        })
      })

      it('answers without CORS headers to any other origin or to none, and with them to the configured origin', async () => {
        const refused = await call(route, OTHER)
        const expected = refused.status
        expect(expected).to.be.oneOf([200, 404])
        expect(cors(refused)).to.deep.equal({ status: expected, origin: null, credentials: null, methods: null })
        expect(refused.headers.get('vary')).to.match(/Origin/)
        expect(cors(await call(route))).to.deep.equal({
          status: expected,
          origin: null,
          credentials: null,
          methods: null,
        })
        expect(cors(await call(route, CONFIGURED))).to.deep.equal({
          status: expected,
          origin: CONFIGURED,
          credentials: 'true',
          methods: null,
        })
      })
    })
  }

  it('without adminCorsOrigins, no origin is granted an admin route', async () => {
    const plain = await startTestService()
    try {
      const answer = await fetch(`${plain.url}/api/projects`, {
        headers: { Origin: CONFIGURED, Authorization: `Bearer ${plain.adminKey}` },
      })
      expect(cors(answer)).to.deep.equal({ status: 200, origin: null, credentials: null, methods: null })
      const refused = await fetch(`${plain.url}/api/projects`, {
        method: 'OPTIONS',
        headers: { Origin: CONFIGURED, 'Access-Control-Request-Method': 'GET' },
      })
      expect(cors(refused)).to.deep.equal({ status: 200, origin: null, credentials: null, methods: null })
    } finally {
      await plain.close()
    }
  })

  it('treats a third party’s route marked with the published contract’s crossOrigin as cross-origin', async () => {
    const published = (await import('../../../.plugin-sdk/plugin-api.js')) as {
      crossOrigin: (ctx: unknown, next: () => Promise<unknown>) => Promise<unknown>
    }
    const plain = await startTestService({}, {})
    try {
      const router = (
        plain.service.app.middleware.find((m) => (m as { router?: unknown }).router !== undefined) as unknown as {
          router: { get(path: string, ...handlers: unknown[]): unknown }
        }
      ).router
      router.get('/third-party/widget', published.crossOrigin, (ctx: { body: unknown }) => {
        ctx.body = { ok: true }
      })
      const preflight = await fetch(`${plain.url}/third-party/widget`, {
        method: 'OPTIONS',
        headers: { Origin: OTHER, 'Access-Control-Request-Method': 'GET' },
      })
      expect(cors(preflight)).to.deep.equal({
        status: 200,
        origin: OTHER,
        credentials: 'true',
        methods: 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
      })
      expect(cors(await fetch(`${plain.url}/third-party/widget`, { headers: { Origin: OTHER } }))).to.include({
        status: 200,
        origin: OTHER,
        credentials: 'true',
      })
    } finally {
      await plain.close()
    }
  })
})
