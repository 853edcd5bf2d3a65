/**
 * Property-based fuzzing of the capture and flags endpoints (fast-check, seeded). FUZZ_RUNS sets
 * the number of bodies (400 by default; `npm run test:long` sends 100,000) and FUZZ_SEED the seed.
 * Every response must be a non-5xx JSON answer within the bound, memory must stay bounded, and
 * every event the service accepted must be well formed in storage.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { defaultPlugins } from '../helpers/default-plugins.ts'
import { fuzzRequest } from './bodies.ts'

const RUNS = Number(process.env.FUZZ_RUNS ?? 400)
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_601)
const RESPONSE_BOUND_MS = 5_000
/**
 * Main-thread heap: the service's own objects. The embedded store keeps every stored event in its
 * worker thread's memory, which grows with what the fuzz run stores and is not a leak.
 */
const HEAP_GROWTH_BOUND_MB = 300
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

describe(`fuzzing capture and flags (${RUNS} bodies, seed ${SEED})`, function () {
  this.timeout(120_000 + RUNS * 100)
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: defaultPlugins(), server: { bodyLimitBytes: 4 * 1024 * 1024, decodedLimitBytes: 16 * 1024 * 1024 } })
  })
  after(async () => t?.close())

  it('answers every body without a 5xx, within the bound, with bounded memory, and stores only well-formed events', async () => {
    const statuses = new Map<number, number>()
    const heapStart = process.memoryUsage().heapUsed
    let heapPeak = heapStart
    let sent = 0
    let slowest = 0
    await fc.assert(
      fc.asyncProperty(fuzzRequest(t.project.api_token), async (request) => {
        const started = performance.now()
        const response = await fetch(t.url + request.path, { method: 'POST', body: new Uint8Array(request.body), headers: request.headers, signal: AbortSignal.timeout(RESPONSE_BOUND_MS * 2) })
        const text = await response.text()
        const ms = performance.now() - started
        slowest = Math.max(slowest, ms)
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
        heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)
        if (++sent % 10_000 === 0) console.log(`      ${sent} bodies, statuses ${JSON.stringify(Object.fromEntries(statuses))}, heap +${Math.round((heapPeak - heapStart) / 2 ** 20)} MB`)
        expect(response.status, `${request.path}: ${text.slice(0, 300)}`).to.be.below(500)
        expect(() => JSON.parse(text), text.slice(0, 200)).not.to.throw()
        expect(ms).to.be.below(RESPONSE_BOUND_MS)
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    )
    const events = await t.service.storage.db.collection('events').find({ project_id: t.project.id }).toArray()
    console.log(`      fuzz: ${RUNS} bodies, statuses ${JSON.stringify(Object.fromEntries(statuses))}, slowest ${Math.round(slowest)} ms, heap +${Math.round((heapPeak - heapStart) / 2 ** 20)} MB, ${events.length} events stored`)
    expect((heapPeak - heapStart) / 2 ** 20).to.be.below(HEAP_GROWTH_BOUND_MB)
    expect(statuses.get(200) ?? 0, 'some bodies accepted').to.be.greaterThan(0)
    for (const event of events) {
      expect(event.uuid).to.match(UUID)
      expect(event.event).to.be.a('string').and.not.equal('')
      expect(event.distinct_id).to.be.a('string').and.not.equal('')
      expect(event.properties).to.be.an('object').and.not.be.an('array')
      expect(event.timestamp).to.be.instanceOf(Date)
      expect(Number.isNaN((event.timestamp as Date).getTime())).to.equal(false)
      expect(event.created_at).to.be.instanceOf(Date)
    }
  })
})
