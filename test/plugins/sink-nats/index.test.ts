import { expect } from 'chai'
import type { NatsConnection } from 'nats'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { uuidv7 } from '../../../core/capture/uuid.ts'
import { NatsServer, readStream } from '../../helpers/nats-server.ts'
import { requireTool } from '../../helpers/requires.ts'

describe('sink-nats plugin', () => {
  const server = new NatsServer()
  requireTool('nats-server')
  let nc: NatsConnection
  before(async () => {
    await server.start()
    nc = await server.connect()
  })
  after(async () => {
    await nc?.close()
    await server.close()
  })

  const start = (options: Record<string, unknown>) =>
    startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'sink-nats', required: true, options: { servers: server.url, ...options } },
      ],
    })
  const post = (t: TestService, batch: unknown[]) =>
    fetch(`${t.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: t.project.api_token, batch }) }).then(
      (r) => r.status,
    )
  async function bootError(options: Record<string, unknown>): Promise<string> {
    const error = await start(options).then(
      async (t) => (await t.close(), undefined),
      (e: unknown) => e as Error,
    )
    return error?.message ?? 'booted'
  }

  it('publishes each event on a subject per project and event name, with <project>:<uuid> as the message id', async () => {
    const t = await start({ stream: 'SUBJECTS', subject: 'app.{project}.{event}' })
    try {
      const batch = [
        { event: 'Signed Up', distinct_id: 'n-1', uuid: uuidv7() },
        {
          event: '$pageview',
          distinct_id: 'n-1',
          uuid: uuidv7(),
          properties: { $current_url: 'https://x.example/a.b' },
        },
      ]
      expect(await post(t, batch)).to.equal(200)
      const messages = await readStream(nc, 'SUBJECTS')
      expect(messages.map((m) => [m.subject, m.msgId])).to.deep.equal([
        [`app.${t.project.id}.Signed%20Up`, `${t.project.id}:${batch[0].uuid}`],
        [`app.${t.project.id}.$pageview`, `${t.project.id}:${batch[1].uuid}`],
      ])
      expect(messages[1].json).to.include({
        uuid: batch[1].uuid,
        event: '$pageview',
        distinct_id: 'n-1',
        project_id: t.project.id,
      })
      expect(messages[1].json.properties).to.include({ $current_url: 'https://x.example/a.b' })
    } finally {
      await t.close()
    }
  })

  it('stores a retried request once (the stream drops duplicate message ids)', async () => {
    const t = await start({ stream: 'RETRIES', subject: 'retries.{project}.{event}' })
    try {
      const batch = [{ event: 'e', distinct_id: 'n-2', uuid: uuidv7() }]
      for (let i = 0; i < 3; i++) expect(await post(t, batch)).to.equal(200)
      expect(await readStream(nc, 'RETRIES')).to.have.length(1)
    } finally {
      await t.close()
    }
  })

  it('stops boot, naming the stream, when it is missing and may not be created or does not capture the subject', async () => {
    expect(await bootError({ stream: 'ABSENT', createStream: false })).to.match(
      /sink-nats.*stream "ABSENT" does not exist/,
    )
    await (await nc.jetstreamManager()).streams.add({ name: 'NARROW', subjects: ['narrow.1.*'] })
    expect(await bootError({ stream: 'NARROW', subject: 'narrow.{project}.{event}' })).to.match(
      /captures \["narrow\.1\.\*"\], not "narrow\.\*\.\*"/,
    )
    expect(await bootError({ subject: 'bad.{team}' })).to.match(/unknown placeholder/)
  })

  it('shuts down within its ack timeout while the server is unreachable', async () => {
    const t = await start({ stream: 'SHUTDOWN', subject: 'shutdown.{project}.{event}', ackTimeoutMs: 300 })
    await server.stop()
    try {
      const started = Date.now()
      await t.close()
      expect(Date.now() - started).to.be.below(3000)
    } finally {
      await server.start()
    }
  })

  it('answers 503 while the server is down, and stores the retried request once after it is back', async () => {
    const t = await start({
      stream: 'RESTART',
      subject: 'restart.{project}.{event}',
      ackTimeoutMs: 300,
      reconnectTimeWaitMs: 50,
    })
    try {
      await server.stop()
      const batch = [{ event: 'during outage', distinct_id: 'n-3', uuid: uuidv7() }]
      expect(await post(t, batch)).to.equal(503)
      await server.start()
      let status = 0
      for (let i = 0; i < 60 && status !== 200; i++) {
        status = await post(t, batch)
        if (status !== 200) await new Promise((r) => setTimeout(r, 100))
      }
      expect(status).to.equal(200)
      const reconnected = await server.connect()
      try {
        expect((await readStream(reconnected, 'RESTART')).map((m) => m.json.uuid)).to.deep.equal([batch[0].uuid])
      } finally {
        await reconnected.close()
      }
    } finally {
      await t.close()
    }
  })
})
