/**
 * Flag changes pushed over Server-Sent Events (GET /ofrep/v1/events): a change made through the
 * admin API, or written to the database by another process, reaches a connected client in under a
 * second with the definitions already served anew; a reconnect with Last-Event-ID gets what it
 * missed; a thousand idle streams cost little and end when the service closes.
 */
import http from 'node:http'
import { expect } from 'chai'
import { startTestService } from '../../../helpers/service.ts'
import type { TestService } from '../../../helpers/service.ts'

interface SseEvent {
  id?: string
  data?: string
}

/** A minimal EventSource: the events as they arrive, and the response's status. */
class SseClient {
  readonly events: SseEvent[] = []
  private buffer = ''
  private waiters: Array<() => void> = []
  readonly request: http.ClientRequest
  status = 0
  ended = false

  constructor(url: string, headers: Record<string, string> = {}) {
    this.request = http.get(url, { headers: { Accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
      this.status = res.statusCode ?? 0
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => this.feed(chunk))
      res.on('end', () => this.finish())
      res.on('error', () => this.finish())
    })
    this.request.on('error', () => this.finish())
  }

  private finish(): void {
    this.ended = true
    this.wake()
  }

  private feed(chunk: string): void {
    this.buffer += chunk
    let end: number
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end)
      this.buffer = this.buffer.slice(end + 2)
      const event: SseEvent = {}
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) event.id = line.slice(4)
        if (line.startsWith('data: ')) event.data = line.slice(6)
      }
      if (event.data !== undefined) this.events.push(event)
    }
    this.wake()
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter()
  }

  /** Resolves once `count` events arrived (or the stream ended), or after `ms`. */
  async waitFor(count: number, ms = 3000): Promise<SseEvent[]> {
    const deadline = Date.now() + ms
    while (this.events.length < count && !this.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, Math.max(0, deadline - Date.now()))
      })
    }
    return this.events
  }

  async opened(): Promise<void> {
    for (let i = 0; i < 500 && this.status === 0 && !this.ended; i++) await new Promise((r) => setTimeout(r, 10))
  }

  close(): void {
    this.request.destroy()
  }
}

const definitions = {
  flags: [{ id: 1, key: 'banner', active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }],
}

describe('decide OFREP event stream', () => {
  let t: TestService
  const streamUrl = () => `${t.url}/ofrep/v1/events?token=${t.project.api_token}`
  const sdkDefinitions = () =>
    fetch(`${t.url}/flags/definitions?token=${t.project.api_token}`, {
      headers: { Authorization: `Bearer ${t.project.secret_api_token}` },
    })
  before(async () => {
    // a slow version poll: changes must arrive through the API path and the change stream
    t = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'decide', options: { pollIntervalMs: 60_000 } },
        { plugin: 'sink-mongo', required: true },
      ],
    })
    expect((await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, definitions)).status).to.equal(200)
  })
  after(async () => t?.close())

  it('refuses a stream without a valid project key', async () => {
    expect((await fetch(`${t.url}/ofrep/v1/events?token=phc_nobody`)).status).to.equal(401)
  })

  it('pushes a change made through the admin API in under a second, after /flags/definitions serves it', async () => {
    const client = new SseClient(streamUrl())
    await client.opened()
    expect(client.status).to.equal(200)
    const before = await sdkDefinitions()
    const started = performance.now()
    expect(
      (await t.admin('PATCH', `/api/projects/${t.project.id}/feature_flags/1/`, { active: false })).status,
    ).to.equal(200)
    const [event] = await client.waitFor(1)
    const latency = performance.now() - started
    client.close()
    expect(event, 'no event arrived').to.not.equal(undefined)
    expect(latency, `took ${latency} ms`).to.be.below(1000)
    const data = JSON.parse(event.data as string) as { type: string; etag: string; lastModified: number }
    expect(data.type).to.equal('refetchEvaluation')
    expect(data.etag).to.not.equal(before.headers.get('ETag'))
    expect((await sdkDefinitions()).headers.get('ETag')).to.equal(data.etag)
    expect(event.id).to.match(/^\d+\.\d+$/)
  })

  it('sends a reconnecting client what it missed, and nothing when it missed nothing', async () => {
    const first = new SseClient(streamUrl())
    await first.opened()
    expect(
      (await t.admin('PATCH', `/api/projects/${t.project.id}/feature_flags/1/`, { active: true })).status,
    ).to.equal(200)
    const [seen] = await first.waitFor(1)
    first.close()
    expect(
      (await t.admin('PATCH', `/api/projects/${t.project.id}/feature_flags/1/`, { name: 'while away' })).status,
    ).to.equal(200)
    const missed = new SseClient(streamUrl(), { 'Last-Event-ID': seen.id as string })
    const [caughtUp] = await missed.waitFor(1)
    missed.close()
    expect(caughtUp?.id).to.be.a('string').and.not.equal(seen.id)
    const current = new SseClient(streamUrl(), { 'Last-Event-ID': caughtUp.id as string })
    expect(await current.waitFor(1, 400)).to.deep.equal([])
    current.close()
  })

  it('pushes a change made through a second service process on the same database, through the change stream', async () => {
    const other = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'decide', options: { pollIntervalMs: 60_000 } },
        { plugin: 'sink-mongo', required: true },
      ],
      storage: { database: t.service.storage.db.databaseName },
    })
    try {
      const client = new SseClient(streamUrl())
      await client.opened()
      const started = performance.now()
      const patched = await other.admin('PATCH', `/api/projects/${t.project.id}/feature_flags/1/`, {
        name: 'changed elsewhere',
      })
      expect(patched.status).to.equal(200)
      const [event] = await client.waitFor(1)
      const latency = performance.now() - started
      client.close()
      expect(event, 'no event for the other process’s change').to.not.equal(undefined)
      expect(latency, `took ${latency} ms`).to.be.below(1000)
    } finally {
      await other.service.close() // not other.close(): that drops the database both services share
    }
  })

  it('holds a thousand streams with bounded memory, pushes a change to all of them within a second, and ends them on close', async function () {
    this.timeout(60_000)
    const own = await startTestService({
      plugins: [{ plugin: 'validate' }, { plugin: 'decide' }, { plugin: 'sink-mongo', required: true }],
    })
    expect((await own.admin('PUT', `/api/projects/${own.project.id}/flag_definitions`, definitions)).status).to.equal(
      200,
    )
    const url = `${own.url}/ofrep/v1/events?token=${own.project.api_token}`
    const rssBefore = process.memoryUsage().rss
    const clients = Array.from({ length: 1000 }, () => new SseClient(url))
    await Promise.all(clients.map((c) => c.opened()))
    expect(clients.filter((c) => c.status === 200)).to.have.length(1000)
    const rssDelta = process.memoryUsage().rss - rssBefore
    // both ends of every connection live in this process, so this bounds the server's share too
    console.log(`      1,000 SSE connections, both ends in one process: +${Math.round(rssDelta / 1024 / 1024)} MiB RSS`)
    expect(rssDelta).to.be.below(150 * 1024 * 1024)
    const changed = performance.now()
    expect(
      (await own.admin('PATCH', `/api/projects/${own.project.id}/feature_flags/1/`, { active: false })).status,
    ).to.equal(200)
    await Promise.all(clients.map((c) => c.waitFor(1)))
    const everyone = performance.now() - changed
    console.log(`      a flag change reached all 1,000 streams in ${Math.round(everyone)} ms`)
    expect(clients.filter((c) => c.events.length === 1)).to.have.length(1000)
    expect(everyone).to.be.below(1000)
    const started = performance.now()
    await own.close()
    const closeMs = performance.now() - started
    await Promise.all(clients.map((c) => c.waitFor(2, 2000)))
    expect(closeMs, `close took ${closeMs} ms`).to.be.below(3000)
    expect(clients.filter((c) => c.ended)).to.have.length(1000)
  })
})
