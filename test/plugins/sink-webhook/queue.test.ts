import { expect } from 'chai'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { postOnce } from '../../../plugins/sink-webhook/post.ts'
import { DeliveryQueue, QueueFullError } from '../../../plugins/sink-webhook/queue.ts'
import type { QueueOptions } from '../../../plugins/sink-webhook/queue.ts'
import { Receiver } from './receiver.ts'

const SECRET = 'queue-test-secret-0123456789'
const docs = (from: number, count: number) => Array.from({ length: count }, (_, i) => JSON.stringify({ n: from + i }))
const numbers = (events: Array<Record<string, unknown>>) => events.map((e) => e.n)

describe('sink-webhook DeliveryQueue', () => {
  let receiver: Receiver
  let paths = 0
  const logs: Array<Record<string, unknown>> = []
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write: (chunk: Buffer, _, done) => (logs.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()),
    }),
  )
  before(async () => {
    receiver = await Receiver.start(SECRET)
  })
  after(() => receiver.close())

  function queue(
    durable: boolean,
    options: Partial<QueueOptions> & { timeoutMs?: number } = {},
  ): { q: DeliveryQueue; path: string } {
    const path = `/q/${++paths}`
    const target = {
      url: receiver.url(path),
      secret: SECRET,
      signatureHeader: 'X-Hedgerow-Signature',
      headers: {},
      timeoutMs: options.timeoutMs ?? 2000,
      maxResponseBytes: 64 * 1024,
    }
    const all: QueueOptions = {
      maxQueueEvents: 1000,
      maxBatchEvents: 100,
      maxRetries: 3,
      initialBackoffMs: 5,
      maxBackoffMs: 50,
      ...options,
    }
    return {
      q: new DeliveryQueue((id, body, signal) => postOnce(target, id, body, signal), all, durable, logger),
      path,
    }
  }
  const rejection = (promise: Promise<void>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error as Error,
    )

  it('durable: resolves once delivered, retrying failed attempts with the same delivery id', async () => {
    const { q, path } = queue(true)
    receiver.plan(path, 500, 2)
    await q.enqueue(docs(0, 3))
    const attempts = receiver.attempts(path)
    expect(attempts.map((a) => a.status)).to.deep.equal([500, 500, 200])
    expect(new Set(attempts.map((a) => a.headers['x-hedgerow-delivery'])).size).to.equal(1)
    expect(numbers(receiver.events(path))).to.deep.equal([0, 1, 2])
    expect(q.size).to.equal(0)
  })

  it('durable: rejects after maxRetries + 1 failed attempts, and at once when the receiver refuses the content', async () => {
    const down = queue(true, { maxRetries: 2 })
    receiver.plan(down.path, 503, Infinity)
    expect((await rejection(down.q.enqueue(docs(0, 1))))?.message).to.equal('answered 503')
    expect(receiver.attempts(down.path)).to.have.length(3)
    const refusing = queue(true)
    receiver.plan(refusing.path, 422)
    expect((await rejection(refusing.q.enqueue(docs(0, 1))))?.message).to.equal('answered 422')
    expect(receiver.attempts(refusing.path)).to.have.length(1)
  })

  it('waits exponentially longer between attempts', async () => {
    const { q, path } = queue(true, { maxRetries: 3, initialBackoffMs: 40, maxBackoffMs: 10_000 })
    receiver.plan(path, 500, 3)
    await q.enqueue(docs(0, 1))
    const at = receiver.attempts(path).map((a) => a.at)
    const gaps = at.slice(1).map((t, i) => t - at[i])
    // jittered within [base/2, base] for bases 40, 80, 160 ms: at least 20, 40 and 80 ms
    expect(gaps[0]).to.be.at.least(18)
    expect(gaps[1]).to.be.at.least(38)
    expect(gaps[2]).to.be.at.least(78)
  })

  it('durable: fails an attempt that gets no answer within the timeout', async () => {
    const { q, path } = queue(true, { maxRetries: 0, timeoutMs: 100 })
    receiver.plan(path, 0)
    expect((await rejection(q.enqueue(docs(0, 1))))?.message).to.equal('no answer within 100 ms')
  })

  it('splits a request larger than maxBatchEvents, and combines requests queued behind a slow POST', async () => {
    const { q, path } = queue(true, { maxBatchEvents: 10 })
    receiver.plan(path, 200, 1, 150)
    await Promise.all([q.enqueue(docs(0, 25)), q.enqueue(docs(25, 3)), q.enqueue(docs(28, 4))])
    const sizes = receiver.delivered(path).map((d) => (JSON.parse(d.body) as { events: unknown[] }).events.length)
    // 25 → 10 + 10 + 5; the 5 and the 3 queued behind the slow first POST share one; 4 more would pass 10
    expect(sizes).to.deep.equal([10, 10, 8, 4])
    expect(numbers(receiver.events(path))).to.deep.equal(Array.from({ length: 32 }, (_, i) => i))
  })

  it('buffered: acknowledges at once, keeps retrying while the receiver is down, refuses events beyond the bound, then delivers each once in order', async () => {
    const { q, path } = queue(false, { maxQueueEvents: 50, maxRetries: 1 })
    receiver.plan(path, 503, 8)
    for (let i = 0; i < 5; i++) await q.enqueue(docs(i * 10, 10))
    expect(q.size).to.equal(50)
    expect(await rejection(q.enqueue(docs(50, 1)))).to.be.instanceOf(QueueFullError)
    for (let i = 0; i < 300 && q.size > 0; i++) await new Promise((r) => setTimeout(r, 10))
    expect(q.size).to.equal(0)
    expect(numbers(receiver.events(path))).to.deep.equal(Array.from({ length: 50 }, (_, i) => i))
    await q.close(1000)
  })

  it('buffered: delivers what is queued when closed, and logs what it could not deliver by the deadline as lost', async () => {
    const healthy = queue(false)
    receiver.plan(healthy.path, 200, 1, 100)
    await healthy.q.enqueue(docs(0, 5))
    await healthy.q.close(2000)
    expect(numbers(receiver.events(healthy.path))).to.deep.equal([0, 1, 2, 3, 4])

    const down = queue(false)
    receiver.plan(down.path, 503, Infinity)
    await down.q.enqueue(docs(0, 7))
    const started = Date.now()
    await down.q.close(200)
    expect(Date.now() - started).to.be.within(150, 1500)
    expect(logs.find((l) => l.lostEvents === 7)).to.include({ msg: 'sink-webhook dropped acknowledged events' })
    expect(await rejection(down.q.enqueue(docs(7, 1)))).to.be.instanceOf(Error)
  })
})
