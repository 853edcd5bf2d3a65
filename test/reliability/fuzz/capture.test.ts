/**
 * Property-based fuzzing of the capture and flags endpoints (fast-check, seeded). FUZZ_RUNS sets
 * the number of bodies (1,000 by default; `npm run test:long` sends 100,000), FUZZ_SEED the seed and
 * FUZZ_CONCURRENCY how many are in flight at once (each fast-check run is a batch of that many
 * bodies sent together, so a failure still replays from the seed and path fast-check prints, and
 * shrinks). Every response must be a non-5xx JSON answer within the bound, memory must stay
 * bounded, and every event the service accepted must be well formed in storage.
 */
import { expect } from 'chai'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import fc from 'fast-check'
import { BSON } from 'mongodb'
import type { Db, ObjectId } from 'mongodb'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { defaultPlugins } from '../helpers/default-plugins.ts'
import { fuzzRequest } from './bodies.ts'
import type { FuzzRequest } from './bodies.ts'

const RUNS = Number(process.env.FUZZ_RUNS ?? 1_000)
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_601)
const CONCURRENCY = Math.max(1, Number(process.env.FUZZ_CONCURRENCY ?? 8))
const RESPONSE_BOUND_MS = 5_000
/**
 * What the service keeps on its main thread: the lowest `heapUsed` seen over the last
 * RETAINED_WINDOWS checks of the stored events (right after a full collection it drops to what is
 * retained; one check's window can be too short to contain one), taken at the end of the run. A
 * leak of anything per request raises it. Not a forced full GC: that blocks
 * the thread the service and its database driver run on for seconds, long enough for the driver to
 * time out its monitor check and clear its pool (what stopped the first 100,000-body runs). The
 * peak of `heapUsed` is mostly garbage not yet collected (huge bodies) and is reported. The embedded
 * store keeps events in its worker thread; they are checked and removed every VERIFY_EVERY bodies
 * so that it, and the process's RSS (reported, and bounded loosely), stay bounded over a long run.
 */
const RETAINED_HEAP_BOUND_MB = 100
const RETAINED_WINDOWS = 10
const RSS_BOUND_MB = 4_096
const VERIFY_EVERY = 1_000
/**
 * Stored events are removed a few hundred at a time: one deleteMany of thousands of large events
 * kept the embedded store's thread busy for over 5 s (it decodes every document it deletes), which
 * made the service's driver time out its monitor check and clear its pool. The service itself never
 * deletes in bulk; the test must not create a stall the service would not.
 */
const DELETE_CHUNK = 200
const PROGRESS_EVERY = 10_000
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const MB = 2 ** 20

/** Checks every stored event of the project, then removes them; returns how many there were. */
async function verifyAndClearEvents(db: Db, projectId: number): Promise<number> {
  const events = db.collection('events')
  const ids: ObjectId[] = []
  for await (const event of events.find({ project_id: projectId })) {
    ids.push(event._id as ObjectId)
    const where = `event ${String(event.uuid)}`
    expect(event.uuid, where).to.match(UUID)
    expect(event.event, where).to.be.a('string').and.not.equal('')
    expect(event.distinct_id, where).to.be.a('string').and.not.equal('')
    expect(event.properties, where).to.be.an('object').and.not.be.an('array')
    expect(event.timestamp, where).to.be.instanceOf(Date)
    expect(Number.isNaN((event.timestamp as Date).getTime()), where).to.equal(false)
    expect(event.created_at, where).to.be.instanceOf(Date)
  }
  for (let i = 0; i < ids.length; i += DELETE_CHUNK)
    await events.deleteMany({ _id: { $in: ids.slice(i, i + DELETE_CHUNK) } })
  return ids.length
}

/**
 * The persons the run left: how many, and the largest one's property count and size. Fuzzed
 * distinct ids repeat (short strings), so their persons gather every random `$set` key, and each
 * new event of theirs carries the whole bag as `person_properties`: why the checks slow over a run.
 */
async function personFigures(db: Db, projectId: number): Promise<string> {
  let count = 0
  let maxKeys = 0
  let maxBytes = 0
  for await (const person of db
    .collection('persons')
    .find({ project_id: projectId }, { projection: { _id: 0, properties: 1 } })) {
    count++
    const properties = (person.properties ?? {}) as Record<string, unknown>
    maxKeys = Math.max(maxKeys, Object.keys(properties).length)
    maxBytes = Math.max(maxBytes, BSON.calculateObjectSize(properties))
  }
  return `${count} persons, the largest with ${maxKeys} properties (${Math.round(maxBytes / 1024)} KB)`
}

describe(`fuzzing capture and flags (${RUNS} bodies, seed ${SEED}, ${CONCURRENCY} at a time)`, function () {
  this.timeout(120_000 + RUNS * 100)
  let t: TestService
  before(async () => {
    t = await startTestService({
      plugins: defaultPlugins(),
      server: { bodyLimitBytes: 4 * 1024 * 1024, decodedLimitBytes: 16 * 1024 * 1024 },
    })
  })
  after(async () => t?.close())

  it('answers every body without a 5xx, within the bound, with bounded memory, and stores only well-formed events', async () => {
    const statuses = new Map<number, number>()
    const heapStart = process.memoryUsage().heapUsed
    const started = performance.now()
    let heapPeak = heapStart
    let heapFloor = heapStart
    const floors: number[] = []
    const retained = () => (floors.length > 0 ? Math.min(...floors.slice(-RETAINED_WINDOWS)) : heapStart)
    let rssPeak = 0
    let sent = 0
    let slowest = 0
    let stored = 0
    let nextVerify = VERIFY_EVERY
    let slowestVerify = 0
    // How long the main thread (the service, the client and the generator) was ever blocked: a
    // stall there delays every answer and the database driver's own timeouts alike.
    const loopDelay = monitorEventLoopDelay({ resolution: 20 })
    loopDelay.enable()
    const figures = () =>
      `${sent} bodies in ${Math.round((performance.now() - started) / 1000)} s, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ` +
      `slowest ${Math.round(slowest)} ms, heap peak +${Math.round((heapPeak - heapStart) / MB)} MB, retained +${Math.round((retained() - heapStart) / MB)} MB, max RSS ${Math.round(rssPeak / MB)} MB, ${stored} events stored and checked (slowest check ${Math.round(slowestVerify)} ms), ` +
      `event loop blocked at most ${Math.round(loopDelay.max / 1e6)} ms`

    const sendOne = async (request: FuzzRequest) => {
      const begun = performance.now()
      const response = await fetch(t.url + request.path, {
        method: 'POST',
        body: new Uint8Array(request.body),
        headers: request.headers,
        signal: AbortSignal.timeout(RESPONSE_BOUND_MS * 2),
      })
      const text = await response.text()
      const ms = performance.now() - begun
      slowest = Math.max(slowest, ms)
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
      const memory = process.memoryUsage()
      heapPeak = Math.max(heapPeak, memory.heapUsed)
      heapFloor = Math.min(heapFloor, memory.heapUsed)
      rssPeak = Math.max(rssPeak, memory.rss)
      if (++sent % PROGRESS_EVERY === 0) console.log(`      ${figures()}`)
      expect(response.status, `${request.path}: ${text.slice(0, 300)}`).to.be.below(500)
      expect(() => JSON.parse(text), text.slice(0, 200)).not.to.throw()
      expect(ms, request.path).to.be.below(RESPONSE_BOUND_MS)
    }

    const verify = async () => {
      const begun = performance.now()
      stored += await verifyAndClearEvents(t.service.storage.db, t.project.id)
      slowestVerify = Math.max(slowestVerify, performance.now() - begun)
      // No answer since the last check (the run ended on one): no new floor.
      if (Number.isFinite(heapFloor)) floors.push(heapFloor)
      heapFloor = Infinity
    }

    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fuzzRequest(t.project.api_token), { minLength: CONCURRENCY, maxLength: CONCURRENCY }),
          async (batch) => {
            const results = await Promise.allSettled(batch.map(sendOne))
            const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
            if (failed) throw failed.reason
            if (sent >= nextVerify) {
              nextVerify += VERIFY_EVERY
              await verify()
            }
          },
        ),
        { numRuns: Math.ceil(RUNS / CONCURRENCY), seed: SEED, endOnFailure: true },
      )
      await verify()
    } finally {
      console.log(`      fuzz: ${figures()}; ${await personFigures(t.service.storage.db, t.project.id)}`)
      loopDelay.disable()
    }
    expect((retained() - heapStart) / MB, 'main-thread heap retained').to.be.below(RETAINED_HEAP_BOUND_MB)
    expect(rssPeak / MB, 'process RSS').to.be.below(RSS_BOUND_MB)
    expect(statuses.get(200) ?? 0, 'some bodies accepted').to.be.greaterThan(0)
    expect(stored, 'some events stored').to.be.greaterThan(0)
  })
})
