/**
 * Issue 25's bounds for the embedded store, as a user meets them: stored events (the
 * sink's documents and indexes, through the driver) must not grow the server's anonymous memory
 * (RssAnon: heap, not the page cache of the data file) beyond a bound that does not grow with the
 * data, and a restart on that folder must answer an indexed query within 3 s.
 *
 * It runs on the engine the service gets when nothing is configured (EMBEDDED_MONGO_ENGINE unset)
 * and on lmdb by name (once, when that is the default), plus EMBEDDED_MONGO_ENGINE if it names
 * another. STORAGE_EVENTS sets the count: 20,000 in npm test (~15 s an engine on 2 loaded cores),
 * 200,000 in npm run test:long (~1.5 min an engine).
 */
import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import { DEFAULT_ENGINE } from '../../core/storage/embedded/index.ts'
import { cpuMs, rssAnon, startEmbeddedChild } from '../bench/embedded-child.ts'
import { EVENT_INDEXES, EVENTS_PROJECT, eventDocument, uuidOf } from '../bench/event-documents.ts'

const EVENTS = Number(process.env.STORAGE_EVENTS ?? 20_000)
const MB = 1024 * 1024

/**
 * The issue's bounds: 200 MB over idle up to 500,000 events and 400 MB at 5 million, a budget for
 * caches, not a share of the data. With reads beside writes the server runs two V8 heaps (the
 * connections' thread and the writer's), each growing under the insert burst by when its
 * collector runs: lmdb measured +87 to +153 MB at 20,000 events and +107 to +118 MB at 5 million
 * (the in-memory engine +340 MB at 200,000 in this process, +1,087 MB in the service).
 */
function rssGrowthBound(events: number): number {
  return events <= 500_000 ? 200 * MB : 400 * MB
}

/** undefined: the default engine, as the service starts it with nothing configured. */
const engines: Array<string | undefined> = [undefined]
for (const named of ['lmdb', process.env.EMBEDDED_MONGO_ENGINE])
  if (named && named !== DEFAULT_ENGINE && !engines.includes(named)) engines.push(named)

for (const engine of engines) {
  const label = engine ?? `the default engine (${DEFAULT_ENGINE})`
  describe(`embedded store on ${label} with ${EVENTS.toLocaleString('en')} events`, function () {
    this.timeout(0)
    // made when the test runs, not when mocha loads the file (a --grep run would leave it behind)
    let dataDir = ''
    before(() => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-storage-memory-'))
    })
    after(() => rmSync(dataDir, { recursive: true, force: true }))

    it(`keeps RssAnon growth under ${rssGrowthBound(EVENTS) / MB} MB and restarts within 3 s`, async () => {
      const emptyStarted = performance.now()
      let server = await startEmbeddedChild(dataDir, engine)
      let client = await MongoClient.connect(server.url)
      const events = () => client.db('hedgerow').collection('events')
      await events().findOne({})
      const emptyStartMs = performance.now() - emptyStarted
      const emptyStartCpu = cpuMs(server.child.pid!)
      await events().createIndexes(EVENT_INDEXES)
      await new Promise((r) => setTimeout(r, 1000))
      const idle = rssAnon(server.child.pid!)
      const batch = 1000
      for (let start = 0; start < EVENTS; start += batch * 4) {
        await Promise.all(
          [0, 1, 2, 3].map(async (w) => {
            const from = start + w * batch
            if (from >= EVENTS) return
            const docs = Array.from({ length: Math.min(batch, EVENTS - from) }, (_, k) => eventDocument(from + k))
            await events().insertMany(docs, { ordered: false })
          }),
        )
      }
      const loaded = rssAnon(server.child.pid!)
      await client.close()
      await server.stop()

      const restartStarted = performance.now()
      server = await startEmbeddedChild(dataDir, engine)
      client = await MongoClient.connect(server.url)
      const found = await events().findOne({ project_id: EVENTS_PROJECT, uuid: uuidOf(EVENTS - 1) })
      const restartMs = performance.now() - restartStarted
      const restartCpu = cpuMs(server.child.pid!)
      expect(found?.uuid).to.equal(uuidOf(EVENTS - 1))
      expect(await events().estimatedDocumentCount()).to.equal(EVENTS)
      const afterRestart = rssAnon(server.child.pid!)
      await client.close()
      await server.stop()

      console.log(
        `      ${label}, ${EVENTS} events: RssAnon idle ${(idle / MB).toFixed(0)} MB, loaded ${(loaded / MB).toFixed(0)} MB (+${((loaded - idle) / MB).toFixed(0)} MB), after restart ${(afterRestart / MB).toFixed(0)} MB; restart until an indexed find answered ${restartMs.toFixed(0)} ms, ${restartCpu.toFixed(0)} ms of CPU (empty folder: ${emptyStartMs.toFixed(0)} ms, ${emptyStartCpu.toFixed(0)} ms of CPU)`,
      )
      expect(loaded - idle, 'RssAnon growth while loading').to.be.below(rssGrowthBound(EVENTS))
      expect(afterRestart - idle, 'RssAnon growth after a restart').to.be.below(rssGrowthBound(EVENTS))
      // Most of a restart is starting node and tsx, whose wall time other jobs on the machine
      // stretch (two to three times at a load average of 15 on 2 cores): the data's share is bounded
      // by the server's CPU until it answered, which they barely move, and the whole against 3 s or
      // three times an empty start, whichever is more.
      expect(restartCpu - emptyStartCpu, 'CPU of the restart due to the data (ms)').to.be.below(1000)
      expect(restartMs, 'restart time').to.be.below(Math.max(3000, 3 * emptyStartMs))
    })
  })
}
