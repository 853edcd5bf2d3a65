/**
 * Queue mode in one process tree: a capture node and workers as in-process services on one
 * database, and a real `nats-server -js`. The crash test with processes is in test/reliability.
 */
import { expect } from 'chai'
import type { NatsConnection } from 'nats'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { NatsServer } from '../../helpers/nats-server.ts'
import { requireTool } from '../../helpers/requires.ts'
import { testDbName } from '../../helpers/mongo.ts'
import { builtInPlugins } from '../../../plugins/index.ts'
import { API_VERSION, definePlugin } from '../../../core/plugin-api.ts'
import type { PluginDefinition } from '../../../core/plugin-api.ts'
import { encodeQueuedEvent } from '../../../core/queue/message.ts'
import { uuidv7 } from '../../../core/capture/uuid.ts'
import { PostHog } from 'posthog-node'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(value)}`)
    await sleep(50)
  }
}

describe('queue mode', function () {
  this.timeout(60_000)
  const nats = new NatsServer()
  requireTool('nats-server')
  let nc: NatsConnection
  let n = 0
  const running: TestService[] = []
  before(async () => {
    await nats.start()
    nc = await nats.connect()
  })
  afterEach(async () => {
    for (const t of running.splice(0).reverse()) await t.service.close().catch(() => undefined)
  })
  after(async () => {
    await nc?.close()
    await nats.close()
  })

  /** A fresh stream and database per test; `extra` plugins come before sink-mongo. */
  function cluster(extraPlugins: PluginDefinition[] = []) {
    const id = ++n
    const database = testDbName('queue')
    const stream = `QUEUE_${id}`
    const builtIns = { ...builtInPlugins, ...Object.fromEntries(extraPlugins.map((p) => [p.name, p])) }
    const plugins = [
      { plugin: 'validate' },
      { plugin: 'persons' },
      ...extraPlugins.map((p) => ({ plugin: p.name, required: true })),
      { plugin: 'sink-mongo', required: true },
    ]
    const start = async (role: 'capture' | 'worker' | 'both', queue: Record<string, unknown> = {}) => {
      const t = await startTestService(
        {
          mode: 'queue',
          queue: {
            role,
            servers: nats.url,
            stream,
            subjectPrefix: `queue${id}.ingest`,
            partitions: 4,
            leaseTtlMs: 1000,
            retryDelayMs: 100,
            ...queue,
          },
          storage: { database },
          plugins,
        },
        { builtIns },
      )
      running.push(t)
      return t
    }
    const queued = async () => (await (await nc.jetstreamManager()).streams.info(stream)).state.messages
    return { stream, start, queued }
  }

  const post = (t: TestService, batch: unknown[]) =>
    fetch(`${t.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: t.project.api_token, batch }) }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }),
    )
  const events = (t: TestService) => t.service.storage.db.collection('events')

  it('answers 200 once JetStream stored the events, one message per event on the project partition subjects; capture runs no step', async () => {
    const c = cluster()
    const capture = await c.start('capture')
    const batch = [
      { event: 'a', distinct_id: 'q-1', uuid: uuidv7() },
      { event: 'b', distinct_id: 'q-2' },
      { event: 'c', distinct_id: 'q-1', uuid: uuidv7() },
    ]
    expect(await post(capture, batch)).to.deep.equal({ status: 200, body: { status: 1 } })
    expect(await c.queued()).to.equal(3)
    const jsm = await nc.jetstreamManager()
    const messages = await Promise.all([1, 2, 3].map((seq) => jsm.streams.getMessage(c.stream, { seq })))
    const bodies = messages.map((m) => m.json<{ p: number; e: { uuid: string; event: string } }>())
    expect(bodies.map((b) => [b.p, b.e.event])).to.deep.equal([
      [capture.project.id, 'a'],
      [capture.project.id, 'b'],
      [capture.project.id, 'c'],
    ])
    expect(bodies[1]!.e.uuid, 'a uuid given at capture').to.match(/^[0-9a-f-]{36}$/)
    expect(messages[0]!.subject).to.equal(messages[2]!.subject) // one distinct_id, one partition
    expect(messages[0]!.subject).to.match(new RegExp(`^queue${n}\\.ingest\\.${capture.project.id}\\.[0-3]$`))
    expect(await events(capture).countDocuments()).to.equal(0)
  })

  it('queues a retried request once', async () => {
    const c = cluster()
    const capture = await c.start('capture')
    const batch = [
      { event: 'a', distinct_id: 'r-1', uuid: uuidv7() },
      { event: 'b', distinct_id: 'r-2', uuid: uuidv7() },
    ]
    for (let i = 0; i < 3; i++) expect((await post(capture, batch)).status).to.equal(200)
    // a retry that sends the uuids in upper case is the same events
    expect(
      (
        await post(
          capture,
          batch.map((event) => ({ ...event, uuid: event.uuid.toUpperCase() })),
        )
      ).status,
    ).to.equal(200)
    expect(await c.queued()).to.equal(2)
  })

  it('workers run the whole hook chain: each event stored once, person updates applied in the order sent', async () => {
    const c = cluster()
    const capture = await c.start('capture')
    const worker = await c.start('worker')
    for (let i = 0; i < 40; i++) {
      const batch = [
        {
          event: 'step',
          distinct_id: 'ordered',
          uuid: uuidv7(),
          properties: { $set: { last: i }, $set_once: { first: i } },
        },
        { event: 'other', distinct_id: `o-${i}`, uuid: uuidv7() },
      ]
      expect((await post(capture, batch)).status).to.equal(200)
    }
    await eventually(
      () => events(worker).countDocuments({ project_id: capture.project.id }),
      (count) => count === 80,
      '80 stored events',
    )
    await eventually(
      () => c.queued(),
      (count) => count === 0,
      'an empty stream',
    )
    const db = worker.service.storage.db
    const mapping = await db
      .collection('person_distinct_ids')
      .findOne({ project_id: capture.project.id, distinct_id: 'ordered' })
    const person = await db.collection('persons').findOne({ project_id: capture.project.id, id: mapping?.person_id })
    expect(person?.properties).to.include({ last: 39, first: 0 })
    const stored = await events(worker).find({ project_id: capture.project.id, distinct_id: 'ordered' }).toArray()
    expect(stored).to.have.length(40)
    expect(new Set(stored.map((e) => e.person_id)).size).to.equal(1)
  })

  it('takes posthog-node traffic: captures, identify with $set and an alias end up stored with their person', async () => {
    const c = cluster()
    const capture = await c.start('capture')
    const worker = await c.start('worker')
    const sdk = new PostHog(capture.project.api_token, {
      host: capture.url,
      flushAt: 100,
      flushInterval: 0,
      fetchRetryCount: 0,
    })
    sdk.capture({ distinctId: 'anon-1', event: 'viewed pricing' })
    sdk.identify({ distinctId: 'user-1', properties: { plan: 'pro' } })
    sdk.alias({ distinctId: 'user-1', alias: 'anon-1' })
    sdk.capture({ distinctId: 'anon-1', event: 'signed up' })
    await sdk.shutdown()
    await eventually(
      () => events(worker).countDocuments({ project_id: capture.project.id }),
      (count) => count === 4,
      'four stored events',
    )
    const db = worker.service.storage.db
    const mappings = await db.collection('person_distinct_ids').find({ project_id: capture.project.id }).toArray()
    expect(new Set(mappings.map((m) => m.person_id)).size, 'anon-1 and user-1 are one person').to.equal(1)
    const person = await db
      .collection('persons')
      .findOne({ project_id: capture.project.id, id: mappings[0]!.person_id })
    expect(person?.properties).to.include({ plan: 'pro' })
  })

  it('runs capture and a worker in one process with role both', async () => {
    const c = cluster()
    const node = await c.start('both')
    expect(
      (
        await post(node, [
          { event: 'here', distinct_id: 'b-1', uuid: uuidv7() },
          { event: 'there', distinct_id: 'b-2' },
        ])
      ).status,
    ).to.equal(200)
    const stored = await eventually(
      () => events(node).find({ project_id: node.project.id }).toArray(),
      (rows) => rows.length === 2,
      'both events stored',
    )
    expect(stored.map((e) => e.event).sort()).to.deep.equal(['here', 'there'])
  })

  it('splits the partitions between two workers, and the one left takes them all without losing an event', async () => {
    const c = cluster()
    const capture = await c.start('capture')
    const first = await c.start('worker')
    const second = await c.start('worker')
    const owned = () =>
      Promise.resolve([first.service.queueWorker!.partitions.length, second.service.queueWorker!.partitions.length])
    await eventually(owned, ([a, b]) => a === 2 && b === 2, 'two partitions each')
    const send = async (from: number) => {
      for (let i = from; i < from + 20; i++)
        expect(
          (
            await post(
              capture,
              Array.from({ length: 10 }, (_, k) => ({
                event: 'spread',
                distinct_id: `s-${k}`,
                uuid: uuidv7(),
                properties: { i },
              })),
            )
          ).status,
        ).to.equal(200)
    }
    await send(0)
    const sending = send(20)
    await sleep(30)
    await first.service.close()
    await sending
    await eventually(
      () => Promise.resolve(second.service.queueWorker!.partitions.length),
      (count) => count === 4,
      'the second worker owning all four partitions',
    )
    await eventually(
      () => events(second).countDocuments({ project_id: capture.project.id }),
      (count) => count === 400,
      '400 stored events',
    )
    const duplicates = await events(second)
      .aggregate([
        { $match: { project_id: capture.project.id } },
        { $group: { _id: '$uuid', n: { $sum: 1 } } },
        { $match: { n: { $gt: 1 } } },
      ])
      .toArray()
    expect(duplicates).to.deep.equal([])
    await eventually(
      () => c.queued(),
      (count) => count === 0,
      'an empty stream',
    )
  })

  it('does not acknowledge a batch whose required sink failed, and stores it once when it runs again', async () => {
    let failuresLeft = 2
    const flaky = definePlugin({
      name: 'flaky-sink',
      apiVersion: API_VERSION,
      setup(api) {
        api.hooks.sink.tapPromise({ name: api.id }, async () => {
          if (failuresLeft > 0) {
            failuresLeft -= 1
            throw new Error('sink down')
          }
        })
      },
    }) as PluginDefinition
    const c = cluster([flaky])
    const capture = await c.start('capture')
    const worker = await c.start('worker')
    const batch = [
      { event: 'retried', distinct_id: 'f-1', uuid: uuidv7() },
      { event: 'retried', distinct_id: 'f-1', uuid: uuidv7() },
    ]
    expect((await post(capture, batch)).status).to.equal(200)
    // sinks run side by side, so sink-mongo may store the events while the flaky one fails: they stay queued
    await eventually(
      () => c.queued(),
      (count) => count === 0,
      'an empty stream',
    )
    expect(failuresLeft).to.equal(0)
    expect(await events(worker).countDocuments({ project_id: capture.project.id })).to.equal(2)
  })

  it('sizes its batches to the lease TTL: grows them while they run quick, halves them while they run slow', async () => {
    const batches: Array<{ size: number; slow: number }> = []
    const slow = definePlugin({
      name: 'slow-step',
      apiVersion: API_VERSION,
      setup(api) {
        // events marked slow take 20 ms each; one distinct_id, so they run one after another
        api.hooks.geoip.tapPromise({ name: api.id }, async (event) => {
          if (event.properties.slow) await new Promise((resolve) => setTimeout(resolve, 20))
          return event
        })
        api.hooks.sink.tapPromise({ name: api.id }, async (batch) => {
          batches.push({ size: batch.events.length, slow: batch.events.filter((e) => e.properties.slow).length })
        })
      },
    }) as PluginDefinition
    const c = cluster([slow])
    const capture = await c.start('capture')
    const batch = Array.from({ length: 300 }, (_, i) => ({
      event: 'paced',
      distinct_id: 'paced-1',
      uuid: uuidv7(),
      properties: { i, slow: i >= 150, $process_person_profile: false },
    }))
    expect((await post(capture, batch)).status).to.equal(200)
    await c.start('worker', { leaseTtlMs: 1600, batchSize: 64 })
    await eventually(
      () => c.queued(),
      (count) => count === 0,
      'an empty stream',
    )
    const sizes = batches.map((b) => b.size)
    expect(sizes.reduce((a, b) => a + b, 0)).to.equal(300)
    // at most: a batch is what arrived by its start, and a loaded machine may deliver the first burst in pieces
    expect(sizes[0], `a new holder starts at an eighth of batchSize (${sizes.join(', ')})`).to.be.at.most(8)
    expect(Math.max(...sizes), `grown while quick (${sizes.join(', ')})`).to.equal(64)
    // over 20 slow events take over 400 ms, a quarter of the TTL: the next batch is at most half as big
    batches.slice(0, -1).forEach(({ size, slow }, i) => {
      if (slow > 20) expect(sizes[i + 1], `batch after one of ${size} (${sizes.join(', ')})`).to.be.at.most(size / 2)
    })
    expect(
      batches.some((b) => b.slow > 20),
      `a slow batch happened (${JSON.stringify(batches)})`,
    ).to.equal(true)
  })

  it('sets aside an acknowledged event grown too large to store, stores the others of its request, and goes on', async () => {
    // capture acknowledged it before any step ran: a step (here a plugin) can make it too large for the database
    const inflate = definePlugin({
      name: 'inflate-step',
      apiVersion: API_VERSION,
      setup(api) {
        api.hooks.flagAttribution.tapPromise({ name: api.id }, async (event) => {
          if (event.properties.inflate)
            return { ...event, properties: { ...event.properties, padding: 'x'.repeat(17 * 1024 * 1024) } }
          return event
        })
      },
    }) as PluginDefinition
    const c = cluster([inflate])
    const capture = await c.start('capture')
    const worker = await c.start('worker')
    const big = uuidv7()
    const first = [
      { event: 'kept', distinct_id: 'i-1', uuid: uuidv7() },
      { event: 'inflated', distinct_id: 'i-1', uuid: big, properties: { inflate: true } },
      { event: 'kept', distinct_id: 'i-2', uuid: uuidv7() },
    ]
    expect((await post(capture, first)).status).to.equal(200)
    expect((await post(capture, [{ event: 'after', distinct_id: 'i-1', uuid: uuidv7() }])).status).to.equal(200)
    await eventually(
      () => c.queued(),
      (count) => count === 0,
      'an empty stream',
      30_000,
    )
    const stored = await events(worker)
      .find({ project_id: capture.project.id }, { projection: { _id: 0, event: 1 } })
      .toArray()
    expect(stored.map((e) => e.event).sort()).to.deep.equal(['after', 'kept', 'kept'])
    const letters = await worker.service.storage.db
      .collection('dead_letters')
      .find({ project_id: capture.project.id })
      .toArray()
    expect(letters).to.have.length(1)
    expect(letters[0]!.error).to.match(/^maximum event size exceeded: event .* would be stored as \d+ bytes/)
    expect(letters[0]!.event).to.deep.include({ uuid: big, event: 'inflated', distinct_id: 'i-1' })
  })

  it('sets aside an event of a project that does not exist, and goes on', async () => {
    const c = cluster()
    const worker = await c.start('worker')
    const js = nc.jetstream()
    await js.publish(
      `queue${n}.ingest.999999.0`,
      encodeQueuedEvent({
        projectId: 999_999,
        receivedAt: new Date(),
        historicalMigration: false,
        event: { event: 'lost', distinct_id: 'x' },
      }),
    )
    await js.publish(`queue${n}.ingest.1.0`, 'not json')
    const deadLetters = worker.service.storage.db.collection('dead_letters')
    const letters = await eventually(
      () => deadLetters.find({ plugin: 'queue' }).toArray(),
      (rows) => rows.length === 2,
      'two dead letters',
    )
    expect(letters.map((l) => l.error).sort()).to.satisfy(
      (errors: string[]) => /project 999999 does not exist/.test(errors[0]!) && /unreadable message/.test(errors[1]!),
    )
    await eventually(
      () => c.queued(),
      (count) => count === 0,
      'an empty stream',
    )
  })

  it('keeps consuming after NATS restarts, without restarting the worker', async () => {
    const c = cluster()
    const capture = await c.start('capture', { reconnectTimeWaitMs: 50 })
    const worker = await c.start('worker', { reconnectTimeWaitMs: 50 })
    expect((await post(capture, [{ event: 'before', distinct_id: 'n-1', uuid: uuidv7() }])).status).to.equal(200)
    await eventually(
      () => events(worker).countDocuments({ project_id: capture.project.id }),
      (count) => count === 1,
      'the first event stored',
    )
    await nats.stop()
    await sleep(300)
    await nats.start()
    await eventually(
      () => post(capture, [{ event: 'after', distinct_id: 'n-1', uuid: uuidv7() }]),
      (r) => r.status === 200,
      '200 after the restart',
    )
    await eventually(
      () => events(worker).countDocuments({ project_id: capture.project.id }),
      (count) => count === 2,
      'the second event stored',
    )
  })

  it('answers 503 with a JSON error while NATS is down, and 200 again once it is back', async () => {
    const c = cluster()
    const capture = await c.start('capture', { publishTimeoutMs: 500, reconnectTimeWaitMs: 50 })
    expect(await (await fetch(`${capture.url}/_readiness`)).json()).to.deep.equal({
      status: 'ready',
      database: 'ok',
      queue: 'ok',
    })
    await nats.stop()
    try {
      const started = Date.now()
      const down = await post(capture, [{ event: 'e', distinct_id: 'd-1', uuid: uuidv7() }])
      expect(down.status).to.equal(503)
      expect(down.body).to.include({ type: 'server_error', code: 'unavailable' })
      expect(Date.now() - started).to.be.below(5000)
      const readiness = await fetch(`${capture.url}/_readiness`)
      expect(readiness.status).to.equal(503)
      expect(await readiness.json()).to.deep.equal({ status: 'not_ready', database: 'ok', queue: 'unreachable' })
    } finally {
      await nats.start()
    }
    const back = await eventually(
      () => post(capture, [{ event: 'e', distinct_id: 'd-1', uuid: uuidv7() }]),
      (r) => r.status === 200,
      '200 after the restart',
    )
    expect(back.body).to.deep.equal({ status: 1 })
    expect((await fetch(`${capture.url}/_readiness`)).status).to.equal(200)
  })
})
