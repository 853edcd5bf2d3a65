import http from 'node:http'
import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

interface Frame {
  id?: string
  event?: string
  data?: string
  comment?: string
}

/** An SSE client over fetch, as the console reads the stream: frames as they arrive. */
class SseClient {
  readonly frames: Frame[] = []
  done = false
  private readonly abort = new AbortController()
  private constructor(readonly response: Response) {}

  static async open(t: TestService, query = '', headers: Record<string, string> = {}): Promise<SseClient> {
    const controller = new AbortController()
    const response = await fetch(`${t.url}/api/projects/${t.project.id}/events/stream${query}`, {
      headers: { Authorization: `Bearer ${t.adminKey}`, ...headers },
      signal: controller.signal,
    })
    const client = new SseClient(response)
    Object.assign(client, { abort: controller })
    if (response.ok) void client.read()
    return client
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder()
    let text = ''
    try {
      for await (const chunk of this.response.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true })
        let end = text.indexOf('\n\n')
        while (end >= 0) {
          const frame: Frame = {}
          for (const line of text.slice(0, end).split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim()
            const match = /^(id|event|data): (.*)$/.exec(line)
            if (match) frame[match[1] as 'id' | 'event' | 'data'] = match[2]
          }
          this.frames.push(frame)
          text = text.slice(end + 2)
          end = text.indexOf('\n\n')
        }
      }
    } catch {
      // aborted by close()
    }
    this.done = true
  }

  events(): Array<Record<string, unknown> & { id: string }> {
    return this.frames
      .filter((f) => f.event === 'event')
      .map((f) => ({ ...(JSON.parse(f.data as string) as Record<string, unknown>), id: f.id as string }))
  }

  async until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms
    while (!check()) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(this.frames)}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  close(): void {
    this.abort.abort()
  }
}

async function send(t: TestService, batch: Array<Record<string, unknown>>): Promise<void> {
  const response = await fetch(`${t.url}/batch/`, {
    method: 'POST',
    body: JSON.stringify({ api_key: t.project.api_token, batch }),
  })
  expect(response.status).to.equal(200)
}

describe('admin API: the live event stream', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({ admin: { eventStreamHeartbeatMs: 200 } })
  })
  after(() => t.close())

  it('refuses a missing or wrong key with 401', async () => {
    const url = `${t.url}/api/projects/${t.project.id}/events/stream`
    expect((await fetch(url)).status).to.equal(401)
    const wrong = await fetch(url, { headers: { Authorization: 'Bearer wrong-key-wrong-key' } })
    expect(wrong.status).to.equal(401)
    expect(await wrong.json()).to.include({ type: 'authentication_error' })
  })

  it('refuses an unknown filter with 400 naming it', async () => {
    const client = await SseClient.open(t, '?colour=red')
    expect(client.response.status).to.equal(400)
    expect(await client.response.json()).to.include({ attr: 'colour' })
  })

  it('sends stored events as they arrive, filtered by event and distinct_id, with a heartbeat', async () => {
    const all = await SseClient.open(t)
    const filtered = await SseClient.open(t, '?event=bought&distinct_id=ann')
    expect(all.response.headers.get('content-type')).to.match(/^text\/event-stream/)
    await send(t, [
      { event: 'bought', distinct_id: 'ann', properties: { price: 3, html: '<img src=x onerror=alert(1)>' } },
      { event: 'bought', distinct_id: 'bob' },
      { event: 'viewed', distinct_id: 'ann' },
    ])
    await all.until(() => all.events().length === 3, 'three events')
    await filtered.until(() => filtered.events().length === 1, 'one event')
    const [ann] = filtered.events()
    expect(ann).to.include({ event: 'bought', distinct_id: 'ann' })
    expect(ann.properties).to.include({ price: 3, html: '<img src=x onerror=alert(1)>' })
    expect(ann).to.include.keys('uuid', 'timestamp', 'person_id', 'person_properties', 'person_mode')
    expect(ann.id).to.match(/^[0-9a-f]{24}$/)
    expect(all.events().map((e) => `${e.event}/${e.distinct_id}`)).to.deep.equal([
      'bought/ann',
      'bought/bob',
      'viewed/ann',
    ])
    await all.until(() => all.frames.some((f) => f.comment === 'ping'), 'a heartbeat comment')
    all.close()
    filtered.close()
  })

  it('resumes after Last-Event-ID without gaps or repeats', async () => {
    const first = await SseClient.open(t, '?distinct_id=resumer')
    await send(t, [{ event: 'one', distinct_id: 'resumer' }])
    await first.until(() => first.events().length === 1, 'the first event')
    const lastId = first.events()[0].id
    first.close()
    await send(t, [
      { event: 'two', distinct_id: 'resumer' },
      { event: 'three', distinct_id: 'resumer' },
    ])
    const again = await SseClient.open(t, '?distinct_id=resumer', { 'Last-Event-ID': lastId })
    await send(t, [{ event: 'four', distinct_id: 'resumer' }])
    await again.until(() => again.events().length === 3, 'the missed events and the new one')
    expect(again.events().map((e) => e.event)).to.deep.equal(['two', 'three', 'four'])
    const bad = await SseClient.open(t, '', { 'Last-Event-ID': 'nonsense' })
    expect(bad.response.status).to.equal(400)
    again.close()
  })

  it('drops events for a client that does not read, and tells it how many', async () => {
    const total = 120
    const big = 'x'.repeat(40_000)
    const frames: string[] = []
    let ended = false
    const request = http.get(`${t.url}/api/projects/${t.project.id}/events/stream?distinct_id=slow`, {
      headers: { Authorization: `Bearer ${t.adminKey}` },
    })
    const response = await new Promise<http.IncomingMessage>((resolve) => request.on('response', resolve))
    expect(response.statusCode).to.equal(200)
    response.pause()
    for (let i = 0; i < total; i += 20)
      await send(
        t,
        Array.from({ length: 20 }, (_, j) => ({ event: `e${i + j}`, distinct_id: 'slow', properties: { big } })),
      )
    await new Promise((resolve) => setTimeout(resolve, 500))
    let text = ''
    response.setEncoding('utf8')
    response.on('data', (chunk: string) => {
      text += chunk
      frames.push(...text.split('\n\n').slice(0, -1))
      text = text.split('\n\n').at(-1) ?? ''
    })
    response.on('end', () => (ended = true))
    response.resume()
    const counts = () => {
      const received = frames.filter((f) => f.includes('event: event')).length
      const dropped = frames
        .filter((f) => f.includes('event: dropped'))
        .reduce((sum, f) => sum + (JSON.parse(f.split('data: ')[1]) as { count: number }).count, 0)
      return { received, dropped }
    }
    const deadline = Date.now() + 10_000
    while (counts().received + counts().dropped < total && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    const { received, dropped } = counts()
    expect(dropped, 'events dropped for the slow client').to.be.greaterThan(0)
    expect(received + dropped).to.equal(total)
    expect(ended).to.equal(false)
    request.destroy()
  })
})

describe('admin API: the live event stream at shutdown', () => {
  it('ends open streams when the service closes, without waiting for the drain timeout', async () => {
    const t = await startTestService({ server: { shutdownTimeoutMs: 20_000 } })
    const client = await SseClient.open(t)
    await send(t, [{ event: 'before-close', distinct_id: 'x' }])
    await client.until(() => client.events().length === 1, 'the event')
    const started = Date.now()
    await t.close()
    await client.until(() => client.done, 'the stream to end', 5000)
    expect(Date.now() - started).to.be.below(5000)
  })
})
