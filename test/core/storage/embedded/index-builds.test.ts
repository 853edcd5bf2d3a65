import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient, type Collection, type Db, type Document } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../../../../core/storage/embedded/index.ts'
import { startEmbeddedCli } from '../../../helpers/embedded.ts'
import { folderPerTest } from '../../../helpers/folders.ts'

const DOCS = 200_000
const GROUPS = 1000

type Engine = 'lmdb' | 'memory'

interface Running {
  server: EmbeddedMongo
  client: MongoClient
  db: Db
}

async function open(dataDir: string, engine: Engine, logged: string[] = []): Promise<Running> {
  const server = await startEmbeddedMongo({
    dataDir,
    engine,
    tcp: { host: '127.0.0.1', port: 0 },
    log: (level, message) => logged.push(`${level}: ${message}`),
  })
  const client = new MongoClient(server.tcpUrl as string, { maxPoolSize: 8 })
  await client.connect()
  return { server, client, db: client.db('app') }
}

async function shut(running: Running): Promise<void> {
  await running.client.close()
  await running.server.close()
}

async function fill(events: Collection, count: number, doc: (i: number) => Document): Promise<void> {
  for (let start = 0; start < count; start += 10_000) {
    const batch = Array.from({ length: Math.min(10_000, count - start) }, (_, k) => doc(start + k))
    await events.insertMany(batch, { ordered: false })
  }
}

/** Resolves once `name` is registered on the collection (listIndexes shows builds in progress, as MongoDB). */
async function registered(coll: Collection, name: string): Promise<void> {
  for (;;) {
    if ((await coll.listIndexes().toArray()).some((ix) => ix.name === name)) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

async function planOf(coll: Collection, filter: Document): Promise<string> {
  const explained = (await coll.find(filter).explain()) as Document
  return JSON.stringify(explained.queryPlanner.winningPlan)
}

/** Every document's (g, _id) as the index lists them and as a collection scan finds them. */
async function compareWithScan(coll: Collection): Promise<void> {
  const byIndex = await coll
    .find({ g: { $gte: -1 } }, { projection: { _id: 1, g: 1 }, hint: 'g_1' })
    .sort({ g: 1, _id: 1 })
    .toArray()
  const scanned = await coll.find({}, { projection: { _id: 1, g: 1 }, hint: { $natural: 1 } }).toArray()
  // an entry missing, or one left by an update beside the new one, changes the list
  const key = (d: Document) => `${d.g}:${String(d._id)}`
  expect(byIndex.length).to.equal(scanned.length)
  expect(byIndex.map(key).sort()).to.deep.equal(scanned.map(key).sort())
}

const gap = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

for (const engine of ['lmdb', 'memory'] as const) {
  describe(`embedded MongoDB index builds beside other commands (${engine})`, function () {
    this.timeout(300_000)
    let dataDir: string
    let running: Running
    beforeEach(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-index-build-'))
      running = await open(dataDir, engine)
    })
    afterEach(async () => {
      await shut(running).catch(() => undefined)
      rmSync(dataDir, { recursive: true, force: true })
    })

    it('answers lookups and writes while it builds, and ends with the entries of every change made meanwhile', async () => {
      const events = running.db.collection('events')
      await fill(events, DOCS, (i) => ({ _id: i as never, g: i % GROUPS, s: `value ${i}` }))
      const started = performance.now()
      let built = 0
      const build = events.createIndex({ g: 1 }).then(() => (built = performance.now()))
      await registered(events, 'g_1')
      // while it builds: the index is listed but not used, and every command below is answered
      expect(await planOf(events, { g: 7 })).to.include('COLLSCAN')
      const latencies: number[] = []
      const answeredBefore: boolean[] = []
      let n = 0
      while (!built) {
        const t = performance.now()
        const id = (n * 7919) % DOCS
        expect(await events.findOne({ _id: id as never })).to.not.equal(undefined)
        await events.insertOne({ _id: `new ${n}` as never, g: n % GROUPS })
        await events.updateOne({ _id: ((n * 104_729) % DOCS) as never }, { $set: { g: GROUPS + n } })
        await events.deleteOne({ _id: ((n * 15_485_863) % DOCS) as never })
        latencies.push(performance.now() - t)
        answeredBefore.push(!built)
        n += 1
        await gap(20)
      }
      await build
      const buildMs = built - started
      // generous: four commands answered in well under the build's time, many of them before it ended
      expect(answeredBefore.filter(Boolean).length).to.be.at.least(3)
      expect(Math.max(...latencies)).to.be.below(buildMs / 2)
      expect(await planOf(events, { g: 7 })).to.include('IXSCAN')
      await compareWithScan(events)
      expect(await events.countDocuments({ g: GROUPS + 1 })).to.equal(
        await events.countDocuments({ g: GROUPS + 1 }, { hint: { $natural: 1 } }),
      )
    })

    it('fails a unique index on a duplicate with E11000, leaving no index', async () => {
      const users = running.db.collection('users')
      await fill(users, 50_000, (i) => ({ _id: i as never, u: i === 40_000 ? 'u10' : `u${i}` }))
      const error = await users.createIndex({ u: 1 }, { unique: true }).catch((e: { code: number }) => e)
      expect(error).to.have.property('code', 11000)
      expect((error as unknown as Error).message).to.match(
        /E11000 duplicate key error .* index: u_1 dup key: \{ u: "u10" \}/,
      )
      expect((await users.listIndexes().toArray()).map((ix) => ix.name)).to.deep.equal(['_id_'])
      expect(await users.countDocuments()).to.equal(50_000)
    })

    it('fails a unique index when a write during the build duplicates a key (the write itself succeeds)', async () => {
      const users = running.db.collection('users')
      await fill(users, DOCS, (i) => ({ _id: i as never, u: `u${i}` }))
      const build = users.createIndex({ u: 1 }, { unique: true }).catch((e: { code: number }) => e)
      await registered(users, 'u_1')
      await users.insertOne({ _id: 'copy' as never, u: 'u3' })
      expect(await build).to.have.property('code', 11000)
      expect((await users.listIndexes().toArray()).map((ix) => ix.name)).to.deep.equal(['_id_'])
      expect(await users.countDocuments({ u: 'u3' })).to.equal(2)
    })

    it('aborts the build when the index or the collection is dropped meanwhile', async () => {
      const events = running.db.collection('events')
      await fill(events, DOCS, (i) => ({ _id: i as never, g: i % GROUPS }))
      const first = events.createIndex({ g: 1 }).catch((e: { code: number }) => e)
      await registered(events, 'g_1')
      await events.dropIndex('g_1')
      expect(await first).to.have.property('code', 276)
      expect((await events.listIndexes().toArray()).map((ix) => ix.name)).to.deep.equal(['_id_'])

      const second = events.createIndex({ g: -1 }).catch((e: { code: number }) => e)
      await registered(events, 'g_-1')
      await events.drop()
      expect(await second).to.have.property('code', 276)
      expect(await events.countDocuments()).to.equal(0)
    })

    it('stops without waiting for a build in progress, which a restart resumes (lmdb) or leaves absent (memory)', async () => {
      const events = running.db.collection('events')
      await fill(events, 100_000, (i) => ({ _id: i as never, g: i % GROUPS }))
      const interrupted = events.createIndex({ g: 1 }).then(
        () => 'built',
        () => 'interrupted',
      )
      await registered(events, 'g_1')
      // the server first: its close must not wait for the build its createIndexes caller waits for
      const stopping = performance.now()
      await running.server.close()
      expect(performance.now() - stopping).to.be.below(10_000)
      expect(await interrupted).to.equal('interrupted')
      await running.client.close()
      running = await open(dataDir, engine)
      const again = running.db.collection('events')
      expect((await again.listIndexes().toArray()).map((ix) => ix.name)).to.deep.equal(
        engine === 'lmdb' ? ['_id_', 'g_1'] : ['_id_'],
      )
      await again.createIndex({ g: 1 })
      await compareWithScan(again)
    })

    it('lets a second createIndexes of the same index wait for the build in progress', async () => {
      const events = running.db.collection('events')
      await fill(events, 50_000, (i) => ({ _id: i as never, g: i % GROUPS }))
      const first = events.createIndex({ g: 1 })
      await registered(events, 'g_1')
      await running.client.db('app').collection('events').createIndex({ g: 1 })
      // answered once the index is ready, not at once
      expect(await planOf(events, { g: 3 })).to.include('IXSCAN')
      await first
    })
  })
}

describe('embedded MongoDB index build killed with SIGKILL', function () {
  this.timeout(300_000)
  let dataDir: string
  folderPerTest('hedgerow-index-build-kill-', (folder) => (dataDir = folder))

  for (const engine of ['lmdb', 'memory'] as const) {
    it(`starts again with the index ${engine === 'lmdb' ? 'resumed and complete' : 'absent'} (${engine})`, async () => {
      const { child, url } = await startEmbeddedCli(dataDir, { EMBEDDED_MONGO_ENGINE: engine })
      const client = new MongoClient(url)
      await client.connect()
      const events = client.db('app').collection('events')
      await fill(events, DOCS, (i) => ({ _id: i as never, g: i % GROUPS }))
      events.createIndex({ g: 1 }).catch(() => undefined)
      await registered(events, 'g_1')
      // writes behind and ahead of the scan, then the kill part-way through the build
      await events.updateOne({ _id: 5 as never }, { $set: { g: -1 } })
      await events.deleteOne({ _id: DOCS - 5 } as Document)
      await events.insertOne({ _id: 'late' as never, g: 3 })
      await gap(300)
      const gone = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await gone
      await client.close().catch(() => undefined)

      const logged: string[] = []
      const running = await open(dataDir, engine, logged)
      try {
        const again = running.db.collection('events')
        const names = (await again.listIndexes().toArray()).map((ix) => ix.name)
        // lmdb resumes the build at start (listed, then used once done); the in-memory engine logs an index once built
        expect(names).to.deep.equal(engine === 'lmdb' ? ['_id_', 'g_1'] : ['_id_'])
        // a createIndexes of it waits for the resumed build (lmdb), or builds it (memory)
        await again.createIndex({ g: 1 })
        expect(await planOf(again, { g: 7 })).to.include('IXSCAN')
        expect(await again.countDocuments()).to.equal(DOCS)
        await compareWithScan(again)
        expect(await again.countDocuments({ g: -1 })).to.equal(1)
        if (engine === 'lmdb') {
          expect(logged.some((l) => /^warn: resuming the build of index g_1 on app.events/.test(l))).to.equal(true)
          expect(logged.some((l) => /^warn: index g_1 on app.events built over/.test(l))).to.equal(true)
        }
      } finally {
        await shut(running)
      }
    })
  }
})
