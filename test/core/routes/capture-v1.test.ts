/**
 * POST /i/v1/analytics/events over real HTTP: what refuses a request or a batch whole (as PostHog's
 * capture v1 does), what drops one event with its reason, and the per-event answer.
 */
import { randomUUID } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { expect } from 'chai'
import { PostHog } from 'posthog-node'
import { startTestService, storedEvents } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

const event = (extra: Record<string, unknown> = {}) => ({
  event: 'clicked',
  uuid: randomUUID(),
  distinct_id: 'v1-user',
  timestamp: new Date().toISOString(),
  options: {},
  properties: { a: 1 },
  ...extra,
})

describe('capture v1 (/i/v1/analytics/events)', () => {
  let t: TestService
  before(async () => {
    t = await startTestService()
  })
  after(async () => t?.close())

  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    Authorization: `Bearer ${t.project.api_token}`,
    'Content-Type': 'application/json',
    'User-Agent': 'test/1.0',
    'PostHog-Sdk-Info': 'posthog-test/9.8.7',
    'PostHog-Attempt': '1',
    'PostHog-Request-Id': randomUUID(),
    'PostHog-Request-Timestamp': new Date().toISOString(),
    ...extra,
  })
  const post = (body: unknown, extra: Record<string, string> = {}, without: string[] = []) => {
    const h = headers(extra)
    for (const name of without) delete h[name]
    return fetch(`${t.url}/i/v1/analytics/events`, {
      method: 'POST',
      headers: h,
      body: typeof body === 'string' ? body : Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body),
    })
  }
  const batch = (...events: unknown[]) => ({ created_at: new Date().toISOString(), batch: events })

  it('stores a gzip batch and answers ok for each uuid, with $lib from PostHog-Sdk-Info', async () => {
    const sent = [
      event({ properties: { a: 1, $lib: 'spoofed' } }),
      event({ session_id: 's-1', options: { process_person_profile: 'false' } }),
    ]
    const response = await post(gzipSync(JSON.stringify(batch(...sent))), { 'Content-Encoding': 'gzip' })
    expect(response.status).to.equal(200)
    expect(await response.json()).to.deep.equal({
      results: Object.fromEntries(sent.map((e) => [e.uuid, { result: 'ok' }])),
    })
    const stored = (await storedEvents(t)).filter((e) => sent.some((s) => s.uuid === e.uuid)) as Array<{
      uuid: string
      properties: Record<string, unknown>
    }>
    expect(stored).to.have.length(2)
    const byUuid = new Map(stored.map((e) => [e.uuid, e.properties]))
    expect(byUuid.get(sent[0].uuid)).to.include({ $lib: 'posthog-test', $lib_version: '9.8.7', a: 1 })
    expect(byUuid.get(sent[1].uuid)).to.include({ $session_id: 's-1', $process_person_profile: false })
  })

  it('drops single events with PostHog’s reasons and keeps the rest', async () => {
    const good = event()
    const cases = {
      missing_distinct_id: event({ distinct_id: '  ' }),
      distinct_id_too_large: event({ distinct_id: 'x'.repeat(201) }),
      missing_event_name: event({ event: '' }),
      event_name_too_long: event({ event: 'e'.repeat(201) }),
      invalid_event_timestamp: event({ timestamp: 'yesterday' }),
      malformed_event_properties: event({ properties: [1, 2] }),
      invalid_options: event({ options: { cookieless_mode: 'maybe' } }),
      event_too_big: event({ properties: { blob: 'x'.repeat(1_000_001) } }),
    }
    const response = await post(batch(good, ...Object.values(cases)))
    expect(response.status).to.equal(200)
    const { results } = (await response.json()) as { results: Record<string, unknown> }
    expect(results[good.uuid]).to.deep.equal({ result: 'ok' })
    for (const [details, e] of Object.entries(cases))
      expect(results[e.uuid], details).to.deep.equal({ result: 'drop', details })
    const stored = await storedEvents(t)
    expect(stored.filter((e) => e.uuid === good.uuid)).to.have.length(1)
    expect(stored.filter((e) => Object.values(cases).some((c) => c.uuid === e.uuid))).to.deep.equal([])
  })

  it('refuses a request or a batch whole, with v1’s error body', async () => {
    const one = batch(event())
    const refusals: Array<[Promise<Response>, number, string]> = [
      [post(one, {}, ['Authorization']), 401, 'missing_authorization'],
      [post(one, { Authorization: 'Bearer phc_nobody' }), 401, 'invalid_api_token'],
      [post(one, {}, ['PostHog-Sdk-Info', 'PostHog-Attempt']), 400, 'missing_required_headers'],
      [post(one, { 'PostHog-Attempt': '0' }), 400, 'invalid_header_value'],
      [post(one, { 'Content-Type': 'text/plain' }), 415, 'unsupported_content_type'],
      [post(one, { 'Content-Encoding': 'zstd' }), 415, 'unsupported_encoding'],
      [post('', {}), 400, 'empty_body'],
      [post('{"batch": [', {}), 400, 'invalid_json'],
      [post({ created_at: 'now', batch: [event()] }), 400, 'invalid_batch'],
      [post(batch()), 400, 'empty_batch'],
      [post(batch(event({ uuid: 'not-a-uuid' }))), 400, 'invalid_event_uuid'],
    ]
    const dup = event()
    refusals.push([post(batch(dup, { ...dup, uuid: dup.uuid.toUpperCase() })), 400, 'duplicate_event_uuid'])
    for (const [pending, status, error] of refusals) {
      const response = await pending
      const body = (await response.json()) as Record<string, unknown>
      expect([response.status, body.error], error).to.deep.equal([status, error])
      expect(body.error_description, error).to.be.a('string').and.not.equal('')
    }
  })

  it('stores what the real posthog-node sends with POSTHOG_CAPTURE_MODE=v1', async () => {
    const previous = process.env.POSTHOG_CAPTURE_MODE
    process.env.POSTHOG_CAPTURE_MODE = 'v1'
    const errors: unknown[] = []
    const paths: string[] = []
    const recording = (url: string, options: Parameters<typeof fetch>[1]) => {
      paths.push(new URL(url).pathname)
      return fetch(url, options)
    }
    const client = new PostHog(t.project.api_token, {
      host: t.url,
      flushAt: 100,
      flushInterval: 0,
      fetchRetryCount: 0,
      fetch: recording as never,
    })
    process.env.POSTHOG_CAPTURE_MODE = previous
    client.on('error', (error) => errors.push(error))
    for (let i = 0; i < 10; i++) client.capture({ distinctId: 'node-v1', event: 'node v1 event', properties: { i } })
    await client.shutdown()
    expect(errors).to.deep.equal([])
    expect(paths).to.deep.equal(['/i/v1/analytics/events'])
    const stored = (await storedEvents(t)).filter((e) => e.event === 'node v1 event') as Array<{
      properties: Record<string, unknown>
    }>
    expect(stored.map((e) => e.properties.i).sort()).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(stored[0].properties.$lib).to.equal('posthog-node')
  })
})
