import { expect } from 'chai'
import { Writable } from 'node:stream'
import { MongoClient, type Document } from 'mongodb'
import { pino } from 'pino'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'
import { startTestService, type TestService } from '../../helpers/service.ts'

const EVENTS = 200_000
const DAY = 86_400

/** A pino logger whose lines are kept, to wait for one. */
function capturingLogger(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString())
      done()
    },
  })
  return { logger: pino({ level: 'info' }, stream), lines }
}

async function logged(lines: string[], pattern: RegExp, timeoutMs: number): Promise<string> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const line = lines.find((l) => pattern.test(l))
    if (line) return line
    if (Date.now() > until) throw new Error(`no log line ${pattern} within ${timeoutMs} ms:\n${lines.join('')}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('sink-mongo retentionDays on a collection that already holds many events', function () {
  this.timeout(300_000)
  const database = testDbName('retention')
  let client: MongoClient
  let service: TestService | undefined

  const start = (retentionDays: number | undefined, logger?: pino.Logger) =>
    startTestService(
      {
        storage: { database },
        // short, so that a setup that waited for the index build over the events would fail
        pipeline: { pluginSetupTimeoutMs: 1500 },
        plugins: [
          { plugin: 'validate' },
          { plugin: 'sink-mongo', required: true, options: retentionDays ? { retentionDays } : {} },
        ],
      },
      logger ? { logger } : {},
    )

  before(async () => {
    client = await new MongoClient(await testMongoUrl()).connect()
  })
  after(async () => {
    await service?.close().catch(() => undefined)
    await client.db(database).dropDatabase()
    await client.close()
  })

  it('starts at once, builds the TTL index in the background with a log line, and changes it when retentionDays changes', async () => {
    // the store as it is before the operator first sets retentionDays: the collection and its indexes, then many events
    service = await start(undefined)
    const events = client.db(database).collection('events')
    const old = new Date(Date.now() - 40 * DAY * 1000)
    for (let start = 0; start < EVENTS; start += 10_000) {
      await events.insertMany(
        Array.from({ length: 10_000 }, (_, k) => ({
          project_id: 99,
          uuid: `u${start + k}`,
          distinct_id: `d${k % 100}`,
          timestamp: old,
          created_at: old,
        })),
      )
    }
    await service.service.close() // TestService.close() would drop the database
    service = undefined

    const first = capturingLogger()
    service = await start(30, first.logger)
    // the service answers while the index builds: an event sent now is stored
    const sent = await fetch(`${service.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        api_key: service.project.api_token,
        batch: [{ event: 'during build', distinct_id: 'x', properties: {} }],
      }),
    })
    expect(sent.status).to.equal(200)
    await logged(
      first.lines,
      new RegExp(`building the retention index \\(retention_ttl\\) over ${EVENTS / 10}\\d events`),
      10_000,
    )
    await logged(first.lines, /retention index retention_ttl ready/, 240_000)
    const ttl = (await events.listIndexes().toArray()).find((ix: Document) => ix.name === 'retention_ttl')
    expect(ttl?.expireAfterSeconds).to.equal(30 * DAY)
    await service.service.close() // TestService.close() would drop the database
    service = undefined

    const second = capturingLogger()
    service = await start(60, second.logger)
    await logged(second.lines, /retention changed to 60 days/, 10_000)
    const changed = (await events.listIndexes().toArray()).find((ix: Document) => ix.name === 'retention_ttl')
    expect(changed?.expireAfterSeconds).to.equal(60 * DAY)
  })
})
