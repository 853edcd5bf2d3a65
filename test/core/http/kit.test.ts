/**
 * The HTTP kit a plugin gets as `api.http`, through real HTTP: a probe plugin mounts routes with
 * it inside the real service, and every answer (auth refusals, body limits, schema errors, pages,
 * rate limits) is read back over the wire.
 */
import { expect } from 'chai'
import { gzipSync } from 'node:zlib'
import { Type } from 'typebox'
import { API_VERSION, definePlugin, httpError, isRetryable, parseWith } from '../../../core/plugin-api.ts'
import { builtInPlugins } from '../../../plugins/index.ts'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

const Greeting = Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false })

/** A plugin written only against the contract, mounting one route per piece of the kit. */
const probe = definePlugin({
  name: 'kit-probe',
  apiVersion: API_VERSION,
  setup(api) {
    const { http } = api
    const limiter = http.rateLimiter(0.01, 2)
    api.hooks.routes.tap({ name: api.id }, (router) => {
      router.get('/probe/admin', http.auth.adminKey, (ctx) => {
        ctx.body = { admin: ctx.state.admin === true }
      })
      router.get('/probe/secret', http.auth.secretKey, (ctx) => {
        ctx.body = { admin: ctx.state.admin === true, project: ctx.state.authProject?.id ?? null }
      })
      router.get('/probe/public', http.auth.publicKey, (ctx) => {
        ctx.body = { project: ctx.state.project.id }
      })
      router.post('/probe/json', http.auth.adminKey, async (ctx) => {
        ctx.body = parseWith(Greeting, await http.readJson(ctx, 64))
      })
      router.post('/probe/payload', async (ctx) => {
        const text = await http.readPayload(ctx, { maxBodyBytes: 1024, maxDecodedBytes: 4096 })
        ctx.body = { decoded: JSON.parse(text), query: http.query(ctx) }
      })
      router.get('/probe/projects/:id', http.auth.adminKey, async (ctx) => {
        ctx.body = { name: (await http.projectParam(ctx)).name }
      })
      router.get('/probe/page', (ctx) => {
        ctx.body = http.page(
          ctx,
          Array.from({ length: 25 }, (_, i) => i),
          10,
        )
      })
      router.get('/probe/cursor', (ctx) => {
        const after = Number(http.query(ctx).after ?? 0)
        const rows = Array.from({ length: 25 }, (_, i) => i + 1).filter((n) => n > after)
        ctx.body = http.cursorPage(ctx, rows.slice(0, 11), 10, 'after', (last) => String(last))
      })
      router.get('/probe/limited', http.auth.publicKey, (ctx) => {
        // a call costs more than the burst: the first passes (the bucket was full), the next waits
        const wait = limiter.take(ctx.state.project.id, 5)
        if (wait !== undefined) {
          ctx.set('Retry-After', String(wait))
          throw httpError('rate_limited', `retry in ${wait} s`)
        }
        api.metrics.count('hedgerow_probe_calls_total', { route: 'limited' })
        ctx.body = { ok: true }
      })
      router.get('/probe/deadline', async (ctx) => {
        try {
          await api.withDeadline(new Promise(() => undefined), 20, 'probe read')
        } catch (error) {
          ctx.body = { message: (error as Error).message, retryable: isRetryable(error) }
        }
      })
    })
  },
})

describe('the HTTP kit (PluginApi.http), through a plugin mounting routes', () => {
  let t: TestService
  before(async () => {
    t = await startTestService(
      { plugins: [{ plugin: 'validate' }, { plugin: 'sink-mongo', required: true }, { plugin: 'kit-probe' }] },
      { builtIns: { ...builtInPlugins, 'kit-probe': probe } },
    )
  })
  after(() => t.close())

  const get = (path: string, headers: Record<string, string> = {}) => fetch(t.url + path, { headers })
  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` })
  async function expectError(response: Response, status: number, code: string, attr: string | null = null) {
    expect(response.status, await response.clone().text()).to.equal(status)
    expect(await response.json()).to.include({ code, attr })
  }

  it('adminKey: 401 without a key or with another key, through with the admin key', async () => {
    await expectError(await get('/probe/admin'), 401, 'not_authenticated')
    await expectError(await get('/probe/admin', bearer('hra_not-the-key')), 401, 'authentication_failed')
    await expectError(await get('/probe/admin', bearer(t.project.secret_api_token)), 401, 'authentication_failed')
    const ok = await get('/probe/admin', bearer(t.adminKey))
    expect(ok.status).to.equal(200)
    expect(await ok.json()).to.deep.equal({ admin: true })
  })

  it("secretKey: a project's secret key names its project, the admin key is let through, a public key is not", async () => {
    const bySecret = await get('/probe/secret', bearer(t.project.secret_api_token))
    expect(await bySecret.json()).to.deep.equal({ admin: false, project: t.project.id })
    const byAdmin = await get('/probe/secret', bearer(t.adminKey))
    expect(await byAdmin.json()).to.deep.equal({ admin: true, project: null })
    await expectError(await get('/probe/secret', bearer(t.project.api_token)), 401, 'authentication_failed')
    await expectError(await get('/probe/secret'), 401, 'not_authenticated')
  })

  it('publicKey: the project key as ?token=, X-API-Key or Bearer; a wrong or missing one is a 401', async () => {
    for (const response of [
      await get(`/probe/public?token=${t.project.api_token}`),
      await get('/probe/public', { 'X-API-Key': t.project.api_token }),
      await get('/probe/public', bearer(t.project.api_token)),
    ]) {
      expect(response.status).to.equal(200)
      expect(await response.json()).to.deep.equal({ project: t.project.id })
    }
    await expectError(await get('/probe/public?token=phc_nobody'), 401, 'invalid_api_key', 'token')
    await expectError(await get('/probe/public'), 401, 'missing_api_key', 'token')
  })

  it('readJson and parseWith: the value, or 413 over the limit, 400 invalid_json, 400 invalid_input naming the field', async () => {
    const post = (body: string) => fetch(`${t.url}/probe/json`, { method: 'POST', headers: bearer(t.adminKey), body })
    const ok = await post('{"name":"ada"}')
    expect(await ok.json()).to.deep.equal({ name: 'ada' })
    await expectError(await post(JSON.stringify({ name: 'x'.repeat(100) })), 413, 'payload_too_large')
    await expectError(await post('{"name":'), 400, 'invalid_json')
    await expectError(await post('{"name":""}'), 400, 'invalid_input', 'name')
    const unknown = await post('{"name":"ada","age":3}')
    expect(unknown.status).to.equal(400)
    expect(await unknown.json()).to.deep.equal({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'age: unknown key',
      attr: 'age',
    })
  })

  it('readPayload: reads gzip as capture does, and keeps its decoded limit', async () => {
    const gzipped = await fetch(`${t.url}/probe/payload?x=1&x=2`, {
      method: 'POST',
      headers: { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' },
      body: gzipSync(JSON.stringify({ hello: 'world' })),
    })
    expect(await gzipped.json()).to.deep.equal({ decoded: { hello: 'world' }, query: { x: '1' } })
    const bomb = await fetch(`${t.url}/probe/payload`, {
      method: 'POST',
      headers: { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' },
      body: gzipSync(JSON.stringify({ pad: ' '.repeat(10_000) })),
    })
    await expectError(bomb, 413, 'payload_too_large')
  })

  it('query: the first value of each parameter, the same for requests that repeat a query string, decoded', async () => {
    const post = async (query: string, body = '{"a":1}') => {
      const answer = (await (await fetch(`${t.url}/probe/payload?${query}`, { method: 'POST', body })).json()) as {
        query?: Record<string, string>
      }
      expect(answer.query, JSON.stringify(answer)).not.to.equal(undefined)
      return answer.query
    }
    const repeated = 'v=2&x=1&x=2&name=a+b%20c'
    const expected = { v: '2', x: '1', name: 'a b c' }
    expect(await post(repeated)).to.deep.equal(expected)
    expect(await post(repeated)).to.deep.equal(expected)
    expect(await post('v=3')).to.deep.equal({ v: '3' })
    // a GET-style payload in the query: too long to be remembered, read as it is
    const data = Buffer.from(JSON.stringify({ pad: 'x'.repeat(300) })).toString('base64')
    expect(await post(`v=2&data=${encodeURIComponent(data)}`, '')).to.deep.equal({ v: '2', data })
    expect(await post(repeated)).to.deep.equal(expected)
  })

  it('projectParam: the project of :id, or a 404 naming id', async () => {
    const found = await get(`/probe/projects/${t.project.id}`, bearer(t.adminKey))
    expect(await found.json()).to.deep.equal({ name: 'test project' })
    await expectError(await get('/probe/projects/999999', bearer(t.adminKey)), 404, 'not_found', 'id')
  })

  it('page and cursorPage: the slice asked for, with links to the neighbours', async () => {
    const second = (await (await get('/probe/page?limit=10&offset=10')).json()) as Record<string, unknown>
    expect(second.count).to.equal(25)
    expect(second.results).to.deep.equal([10, 11, 12, 13, 14, 15, 16, 17, 18, 19])
    expect(new URL(second.next as string).search).to.equal('?limit=10&offset=20')
    expect(new URL(second.previous as string).search).to.equal('?limit=10&offset=0')
    const first = (await (await get('/probe/cursor')).json()) as { results: number[]; next: string }
    expect(first.results).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    const next = (await (await fetch(first.next)).json()) as { results: number[] }
    expect(next.results[0]).to.equal(11)
    const last = (await (await get('/probe/cursor?after=20')).json()) as { results: number[]; next: null }
    expect(last).to.deep.equal({ results: [21, 22, 23, 24, 25], next: null })
  })

  it("rateLimiter and metrics: a full bucket passes, then the catalogue's 429; counted calls show at /_metrics", async () => {
    const call = () => get(`/probe/limited?token=${t.project.api_token}`)
    expect((await call()).status).to.equal(200)
    const refused = await call()
    expect(refused.headers.get('retry-after')).to.match(/^[1-9]\d*$/)
    await expectError(refused, 429, 'rate_limited')
    const metrics = await (await get('/_metrics')).text()
    expect(metrics).to.include('hedgerow_probe_calls_total{route="limited"} 1')
  })

  it('withDeadline: work that takes too long fails with a retryable error naming it', async () => {
    const body = await (await get('/probe/deadline')).json()
    expect(body).to.deep.equal({ message: 'probe read timed out after 20 ms', retryable: true })
  })
})
