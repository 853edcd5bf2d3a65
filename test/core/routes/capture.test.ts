import { expect } from 'chai'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { startTestService, storedEvents } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { CAPTURE_PATHS } from '../../../core/routes/capture.ts'

let counter = 0
const uuid = () => `0190a000-0000-7000-8000-${String(++counter).padStart(12, '0')}`

describe('capture endpoints', () => {
  let t: TestService
  before(async () => {
    t = await startTestService()
  })
  after(() => t.close())

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(t.url + path, {
      method: 'POST',
      body: typeof body === 'string' ? body : new Uint8Array(body),
      headers: { 'Content-Type': 'application/json', ...headers },
    })

  async function expectStored(id: string): Promise<Record<string, unknown>> {
    const events = await storedEvents(t, `&distinct_id=${encodeURIComponent(id)}`)
    expect(events, `events of ${id}`).to.have.length.greaterThan(0)
    return events[0]
  }

  it('answers exactly 200 {"status": 1} and stores a single event on every path, with and without the slash', async () => {
    for (const path of CAPTURE_PATHS) {
      for (const slash of ['', '/']) {
        const id = `path-${path}${slash}`
        const event = path === '/engage' ? { $set: { plan: 'pro' } } : { event: 'hit', properties: { path } }
        const response = await post(
          path + slash,
          JSON.stringify({ api_key: t.project.api_token, distinct_id: id, ...event }),
        )
        expect(response.status, `${path}${slash}`).to.equal(200)
        expect(await response.json()).to.deep.equal({ status: 1 })
        const stored = await expectStored(id)
        expect(stored.event).to.equal(path === '/engage' ? '$identify' : 'hit')
      }
    }
  })

  it('stores a batch in order, keeping client uuids and computing timestamps from sent_at', async () => {
    const sentAt = new Date(Date.now() + 10_000).toISOString() // the client clock is 10 s ahead
    const ts = new Date(Date.now() - 50_000)
    const batch = [1, 2, 3].map((n) => ({
      event: `batch ${n}`,
      distinct_id: 'batch-user',
      uuid: uuid(),
      timestamp: new Date(ts.getTime() + n).toISOString(),
    }))
    const response = await post('/batch/', JSON.stringify({ api_key: t.project.api_token, batch, sent_at: sentAt }))
    expect(response.status).to.equal(200)
    const events = await storedEvents(t, '&distinct_id=batch-user')
    expect(events.map((e) => e.uuid)).to.deep.equal(batch.map((e) => e.uuid).reverse())
    const skew = ts.getTime() + 3 - new Date(events[0].timestamp as string).getTime()
    expect(skew).to.be.within(9_000, 11_000)
    expect((events[0].properties as Record<string, unknown>).$sent_at).to.equal(sentAt)
  })

  it('accepts gzip by header, by ?compression= and by magic bytes alone (text/plain, like posthog-js)', async () => {
    const body = (id: string) =>
      gzipSync(JSON.stringify([{ event: 'gz', distinct_id: id, properties: { token: t.project.api_token } }]))
    expect((await post('/batch/', body('gz-header'), { 'Content-Encoding': 'gzip' })).status).to.equal(200)
    expect((await post('/e/?compression=gzip-js', body('gz-query'), { 'Content-Type': 'text/plain' })).status).to.equal(
      200,
    )
    expect(
      (await post('/e/?retry_count=1&_=1732280000000&ver=1.449.2', body('gz-magic'), { 'Content-Type': 'text/plain' }))
        .status,
    ).to.equal(200)
    for (const id of ['gz-header', 'gz-query', 'gz-magic']) await expectStored(id)
  })

  it('accepts lz64 and base64 form bodies and GET data=', async () => {
    const json = (id: string) => JSON.stringify({ api_key: t.project.api_token, event: 'enc', distinct_id: id })
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' }
    const lz = await post(
      '/e/?compression=lz64',
      `data=${encodeURIComponent(LZString.compressToBase64(json('lz64')))}`,
      form,
    )
    const b64 = await post('/e/', `data=${encodeURIComponent(Buffer.from(json('b64')).toString('base64'))}`, form)
    const get = await fetch(`${t.url}/e/?data=${encodeURIComponent(Buffer.from(json('get')).toString('base64'))}`)
    expect([lz.status, b64.status, get.status], await lz.text()).to.deep.equal([200, 200, 200])
    for (const id of ['lz64', 'b64', 'get']) await expectStored(id)
  })

  it('is idempotent on retries: a repeated uuid is stored once and still answers 200', async () => {
    const event = { api_key: t.project.api_token, event: 'retry', distinct_id: 'retry-user', uuid: uuid() }
    for (let i = 0; i < 3; i++) expect((await post('/i/v0/e/', JSON.stringify(event))).status).to.equal(200)
    expect(await storedEvents(t, '&distinct_id=retry-user')).to.have.length(1)
  })

  it('drops events without a name or distinct_id, answers 200, and records each drop as a warning', async () => {
    const batch = [
      { distinct_id: 'x' },
      { event: 'no id' },
      { event: 'empty id', distinct_id: '' },
      { event: 'bad uuid', distinct_id: 'y', uuid: 'nope' },
      { event: 'kept', distinct_id: 'kept-user' },
    ]
    const response = await post('/batch/', JSON.stringify({ api_key: t.project.api_token, batch }))
    expect(response.status).to.equal(200)
    await expectStored('kept-user')
    const warnings = (await (
      await t.admin('GET', `/api/projects/${t.project.id}/ingestion_warnings?limit=10`)
    ).json()) as { results: Array<{ type: string }> }
    expect(warnings.results.map((w) => w.type)).to.include.members([
      'missing_event_name',
      'missing_distinct_id',
      'skipping_event_invalid_uuid',
    ])
  })

  it('answers 400 with a JSON error for bodies that are not JSON or have the wrong shape', async () => {
    for (const body of ['not json', '{"api_key": "x", "batch": {}}', '[]']) {
      const response = await post('/batch/', body)
      expect(response.status, body).to.equal(400)
      const error = (await response.json()) as Record<string, unknown>
      expect(error).to.have.keys('type', 'code', 'detail', 'attr')
      expect(error.type).to.equal('validation_error')
    }
  })

  it('answers 401 for a missing, malformed or unknown API key', async () => {
    for (const api_key of [undefined, 'phx_personal', 'phc_unknown']) {
      const response = await post('/i/v0/e/', JSON.stringify({ api_key, event: 'e', distinct_id: 'd' }))
      expect(response.status, String(api_key)).to.equal(401)
      expect(await response.json()).to.include({ type: 'authentication_error' })
    }
  })

  it('answers 413 for a body over the limit and for a gzip body whose decompressed size is over it', async () => {
    const small = await startTestService({ server: { bodyLimitBytes: 4096, decodedLimitBytes: 8192 } })
    try {
      const big = JSON.stringify({
        api_key: small.project.api_token,
        event: 'e',
        distinct_id: 'd',
        properties: { pad: 'x'.repeat(10_000) },
      })
      const plain = await fetch(`${small.url}/batch/`, { method: 'POST', body: big })
      expect(plain.status).to.equal(413)
      expect(await plain.json()).to.include({ code: 'payload_too_large' })
      const bomb = await fetch(`${small.url}/batch/`, {
        method: 'POST',
        body: new Uint8Array(gzipSync(big)),
        headers: { 'Content-Encoding': 'gzip' },
      })
      expect(bomb.status).to.equal(413)
    } finally {
      await small.close()
    }
  })

  it('answers CORS preflights and echoes the Origin with credentials', async () => {
    const preflight = await fetch(`${t.url}/e/`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    })
    expect(preflight.status).to.equal(200)
    expect(preflight.headers.get('access-control-allow-origin')).to.equal('https://app.example')
    expect(preflight.headers.get('access-control-allow-credentials')).to.equal('true')
    expect(preflight.headers.get('access-control-allow-headers')).to.equal('content-type')
    const response = await post(
      '/e/',
      JSON.stringify({ api_key: t.project.api_token, event: 'e', distinct_id: 'cors' }),
      { Origin: 'https://app.example' },
    )
    expect(response.headers.get('access-control-allow-origin')).to.equal('https://app.example')
  })

  it('answers 503 and stores nothing twice when the required sink fails, so the SDK retries', async () => {
    const failing = await startTestService(
      {
        plugins: [
          { plugin: 'validate' },
          { plugin: 'sink-mongo', required: true },
          { plugin: './failing-sink', required: true },
        ],
      },
      { configDir: new URL('../../fixtures/plugins/', import.meta.url).pathname },
    )
    try {
      const response = await fetch(`${failing.url}/i/v0/e/`, {
        method: 'POST',
        body: JSON.stringify({ api_key: failing.project.api_token, event: 'e', distinct_id: 'd', uuid: uuid() }),
      })
      expect(response.status).to.equal(503)
      expect(await response.json()).to.include({ type: 'server_error', code: 'unavailable' })
    } finally {
      await failing.close()
    }
  })

  it('keeps answering 200 when only an optional sink fails', async () => {
    const partial = await startTestService(
      { plugins: [{ plugin: 'validate' }, { plugin: 'sink-mongo', required: true }, { plugin: './failing-sink' }] },
      { configDir: new URL('../../fixtures/plugins/', import.meta.url).pathname },
    )
    try {
      const response = await fetch(`${partial.url}/i/v0/e/`, {
        method: 'POST',
        body: JSON.stringify({ api_key: partial.project.api_token, event: 'e', distinct_id: 'optional-fail' }),
      })
      expect(response.status).to.equal(200)
      expect(await storedEvents(partial)).to.have.length(1)
    } finally {
      await partial.close()
    }
  })

  it('stores the event when a geoip plugin throws synchronously from a promise tap (skip policy, no hang)', async () => {
    const fixtures = new URL('../../fixtures/plugins/', import.meta.url).pathname
    const throwing = await startTestService(
      {
        plugins: [
          { plugin: 'validate' },
          { plugin: 'geoip', options: {} },
          { plugin: './sync-throwing-tap' },
          { plugin: 'sink-mongo', required: true },
        ],
      },
      { configDir: fixtures },
    )
    try {
      const response = await fetch(`${throwing.url}/i/v0/e/`, {
        method: 'POST',
        body: JSON.stringify({
          api_key: throwing.project.api_token,
          event: 'e',
          distinct_id: 'sync-throw',
          properties: { $ip: '8.8.8.8' },
        }),
        signal: AbortSignal.timeout(5000),
      })
      expect(response.status).to.equal(200)
      const [stored] = await storedEvents(throwing)
      expect(stored.distinct_id).to.equal('sync-throw')
    } finally {
      await throwing.close()
    }
  })

  it('GET /_health and /_readiness answer 200 while the database is up', async () => {
    expect((await fetch(`${t.url}/_health`)).status).to.equal(200)
    const ready = await fetch(`${t.url}/_readiness`)
    expect(ready.status).to.equal(200)
    expect(await ready.json()).to.deep.equal({ status: 'ready', database: 'ok' })
  })

  it('answers unknown routes with a JSON 404', async () => {
    const response = await fetch(`${t.url}/nope`)
    expect(response.status).to.equal(404)
    expect(await response.json()).to.include({ code: 'not_found' })
  })
})
