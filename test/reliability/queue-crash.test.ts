/**
 * Queue mode across processes: one capture node and two workers (`npm run worker`), each its own
 * process, a real nats-server and one database. Under steady load, kill -9 a worker at random
 * moments (RELIABILITY_CRASHES times, 5 by default) and start it again. Afterwards every
 * acknowledged event is stored exactly once, every acknowledged person update is kept, and each
 * distinct_id's events were applied in the order they were sent.
 */
import { expect } from 'chai'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongo } from '../../core/storage/embedded/index.ts'
import type { EmbeddedMongo } from '../../core/storage/embedded/index.ts'
import { spawnService, startServiceProcess } from '../helpers/process.ts'
import type { Child } from '../helpers/process.ts'
import { NatsServer } from '../helpers/nats-server.ts'
import { requireTool } from '../helpers/requires.ts'
import { CaptureLoad } from './helpers/load.ts'
import { checkStore } from './helpers/verify.ts'

const CRASHES = Number(process.env.RELIABILITY_CRASHES ?? 5)
const ADMIN_KEY = 'hra_queue-crash-admin-key-0123'
const ORDERED_IDS = 6
const STALL_MS = 30_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One sender per distinct_id, each request after the previous one was acknowledged: the order to keep. */
class OrderedSenders {
  readonly lastAcked = new Map<string, number>()
  private seq = 0
  constructor(private readonly token: string) {}

  async run(url: string, stop: Promise<unknown>): Promise<void> {
    let stopped = false
    void stop.then(() => (stopped = true))
    await Promise.all(
      Array.from({ length: ORDERED_IDS }, async (_, i) => {
        const distinctId = `ordered-${i}`
        while (!stopped) {
          const events = Array.from({ length: 1 + Math.floor(Math.random() * 4) }, () => ({
            event: 'ordered',
            distinct_id: distinctId,
            uuid: randomUUID(),
            properties: { $set: { last: ++this.seq } },
          }))
          const body = JSON.stringify({ api_key: this.token, batch: events })
          for (let attempt = 0; ; attempt++) {
            const status = await fetch(`${url}/batch/`, { method: 'POST', body }).then(
              (r) => r.status,
              () => 0,
            )
            if (status === 200) break
            if (attempt > 50) throw new Error(`capture kept answering ${status}`)
            await sleep(100)
          }
          this.lastAcked.set(distinctId, (events.at(-1)!.properties.$set as { last: number }).last)
          await sleep(20)
        }
      }),
    )
  }
}

describe('kill -9 of queue workers under load (queue mode)', function () {
  this.timeout(120_000 + CRASHES * 30_000)
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-queue-crash-'))
  const nats = new NatsServer()
  requireTool('nats-server')
  let store: EmbeddedMongo
  const children: Child[] = []
  before(async () => {
    await nats.start()
    store = await startEmbeddedMongo({ dataDir: path.join(dataDir, 'mongo') })
  })
  after(async () => {
    await Promise.all(children.map((c) => c.kill('SIGKILL')))
    await store?.close()
    await nats.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it(`stores every acknowledged event once, in order per distinct_id, across ${CRASHES} worker kills`, async () => {
    const configFile = path.join(dataDir, 'queue.json')
    writeFileSync(
      configFile,
      JSON.stringify({
        mode: 'queue',
        queue: { servers: nats.url, leaseTtlMs: 1500, retryDelayMs: 200, partitions: 8 },
      }),
    )
    const env = {
      CONFIG_FILE: configFile,
      MONGODB_URL: store.url,
      ADMIN_API_KEY: ADMIN_KEY,
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.RELIABILITY_LOG_LEVEL ?? 'info',
    }
    const capture = await startServiceProcess({ ...env, QUEUE_ROLE: 'capture' })
    children.push(capture)
    const startWorker = async () => {
      const worker = spawnService({ ...env, QUEUE_ROLE: 'worker' })
      children.push(worker)
      await worker.waitFor((l) => l.msg === 'hedgerow worker is consuming', 'worker start line', 60_000) // a loaded machine starts tsx slowly
      return worker
    }
    const workers = [await startWorker(), await startWorker()]
    const created = await fetch(`${capture.url}/api/projects`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
      body: '{"name":"queue crash"}',
    })
    const project = (await created.json()) as { id: number; api_token: string }

    const load = new CaptureLoad({ token: project.api_token, concurrency: 4, pauseMs: 40 })
    const ordered = new OrderedSenders(project.api_token)
    let stopLoad!: () => void
    const stop = new Promise<void>((resolve) => (stopLoad = resolve))
    const loads = Promise.all([load.run(capture.url, stop), ordered.run(capture.url, stop)])
    for (let crash = 1; crash <= CRASHES; crash++) {
      await sleep(700 + Math.random() * 1300)
      const victim = Math.floor(Math.random() * workers.length)
      await workers[victim]!.kill('SIGKILL')
      workers[victim] = await startWorker()
    }
    await sleep(500)
    stopLoad()
    await loads
    await load.retryPending(capture.url)

    const client = await MongoClient.connect(store.url)
    try {
      const db = client.db('hedgerow')
      // A message leaves the work-queue stream when a worker acknowledged it, i.e. after it was stored.
      const nc = await nats.connect()
      const jsm = await nc.jetstreamManager()
      // Liveness, not speed: under a starved CPU the backlog may take minutes, but it must keep shrinking.
      const drainStart = Date.now()
      const backlog = (await jsm.streams.info('HEDGEROW_INGEST')).state.messages
      let queued = backlog
      let progressAt = Date.now()
      while (queued !== 0 && Date.now() - progressAt < STALL_MS) {
        await sleep(250)
        const now = (await jsm.streams.info('HEDGEROW_INGEST')).state.messages
        if (now < queued) progressAt = Date.now()
        queued = now
      }
      console.log(
        `      backlog when the load stopped: ${backlog} events, drained in ${((Date.now() - drainStart) / 1000).toFixed(1)} s`,
      )
      if (queued !== 0) {
        const kv = await nc.jetstream().views.kv('HEDGEROW_INGEST_leases')
        const leases: string[] = []
        for (let p = 0; p < 8; p++) leases.push(`p${p}=${(await kv.get(`p${p}`))?.string()}`)
        const consumers = await jsm.consumers.list('HEDGEROW_INGEST').next()
        const ping = await Promise.race([
          db.command({ ping: 1 }).then(
            () => 'ok',
            (e: Error) => e.message,
          ),
          sleep(5000).then(() => 'no answer in 5 s'),
        ])
        const events = await Promise.race([
          db
            .collection('events')
            .estimatedDocumentCount()
            .then(String, (e: Error) => e.message),
          sleep(5000).then(() => 'no answer in 5 s'),
        ])
        console.log(new Date().toISOString(), 'database ping', ping, 'events', events)
        const leaseStream = (await jsm.streams.info('KV_HEDGEROW_INGEST_leases')).state
        console.log(
          'leases',
          leases,
          'lease stream',
          leaseStream.messages,
          leaseStream.num_subjects,
          'consumers',
          consumers.map((c) => [
            c.name,
            c.num_pending,
            c.num_ack_pending,
            c.num_redelivered,
            c.num_waiting,
            c.delivered.stream_seq,
          ]),
        )
        console.log(
          workers
            .map((w) =>
              w
                .output()
                .split('\n')
                .filter((l) => /warn|error|partition/i.test(l))
                .slice(-40)
                .join('\n'),
            )
            .join('\n----\n'),
        )
      }
      await nc.close()
      expect(queued, `events still queued, none acknowledged for ${STALL_MS / 1000} s`).to.equal(0)
      const check = await checkStore(db, project.id, load)
      const orderViolations: string[] = []
      for (const [distinctId, last] of ordered.lastAcked) {
        const mapping = await db
          .collection('person_distinct_ids')
          .findOne({ project_id: project.id, distinct_id: distinctId })
        const person = mapping
          ? await db.collection('persons').findOne({ project_id: project.id, id: mapping.person_id })
          : null
        if (person?.properties?.last !== last)
          orderViolations.push(`${distinctId}: last sent ${last}, stored ${person?.properties?.last}`)
      }
      const orderedStored = await db.collection('events').countDocuments({ project_id: project.id, event: 'ordered' })
      const orderedDuplicates = await db
        .collection('events')
        .aggregate([
          { $match: { project_id: project.id, event: 'ordered' } },
          { $group: { _id: '$uuid', n: { $sum: 1 } } },
          { $match: { n: { $gt: 1 } } },
        ])
        .toArray()
      const slowBatches = workers.flatMap((w) =>
        w.lines
          .filter((l) => String(l.msg).startsWith('queue batch outlasted'))
          .map((l) => `${l.size} events in ${l.ms} ms`),
      )
      console.log(
        `      batches that outlasted the lease TTL in the last two workers: ${slowBatches.length} (${slowBatches.slice(0, 8).join(', ')})`,
      )
      console.log(
        `      worker kills: ${CRASHES}, load events acknowledged: ${load.acked.size}, stored: ${check.events}, ordered events stored: ${orderedStored}, person keys checked: ${check.personKeysChecked}, statuses: ${JSON.stringify(Object.fromEntries(load.statuses))}`,
      )
      expect(check.missingEvents, 'acknowledged events not stored').to.deep.equal([])
      expect(check.duplicates + orderedDuplicates.length, 'events stored twice').to.equal(0)
      expect(check.missingPersonKeys, 'acknowledged person updates lost').to.deep.equal([])
      expect(orderViolations, 'person updates applied out of order').to.deep.equal([])
      expect(check.personKeysChecked).to.be.greaterThan(0)
    } finally {
      await client.close()
    }
    for (const child of [capture, ...workers]) {
      await child.kill('SIGTERM')
      expect(await child.exited, 'clean exit after SIGTERM').to.equal(0)
    }
  })
})
