import { expect } from 'chai'
import type { ChildProcess } from 'node:child_process'
import { appendFileSync, chmodSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { MongoClient, type Document } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../../../../core/storage/embedded/index.ts'
import { startEmbeddedCli } from '../../../helpers/embedded.ts'
import { folderPerTest } from '../../../helpers/folders.ts'

interface Running {
  server: EmbeddedMongo
  client: MongoClient
}

async function open(
  dataDir: string,
  extra: { compactMinBytes?: number; engine?: 'memory' | 'lmdb' } = {},
): Promise<Running> {
  const server = await startEmbeddedMongo({ dataDir, runIn: 'current-thread', ...extra })
  const client = new MongoClient(server.url)
  await client.connect()
  return { server, client }
}

const MEMORY = { engine: 'memory' } as const

async function shut(running: Running): Promise<void> {
  await running.client.close()
  await running.server.close()
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))

describe('embedded MongoDB durability', () => {
  let dataDir: string
  folderPerTest('hedgerow-durability-', (folder) => (dataDir = folder))

  it('keeps documents, updates, deletes, indexes and renames across a clean restart', async () => {
    let running = await open(dataDir)
    let db = running.client.db('app')
    await db.collection('persons').createIndex({ project_id: 1, distinct_id: 1 }, { unique: true })
    await db
      .collection('persons')
      .insertMany(
        Array.from({ length: 50 }, (_, i) => ({ _id: i, project_id: 1, distinct_id: `d${i}`, v: 1 })) as Document[],
      )
    await db.collection('persons').updateMany({ _id: { $lt: 10 } } as Document, { $set: { v: 2 } })
    await db.collection('persons').deleteMany({ _id: { $gte: 40 } } as Document)
    await db.collection('tmp').insertOne({ x: 1 })
    await db.collection('tmp').rename('kept')
    await db.collection('gone').insertOne({ x: 1 })
    await db.collection('gone').drop()
    await shut(running)

    running = await open(dataDir)
    db = running.client.db('app')
    try {
      expect(await db.collection('persons').countDocuments()).to.equal(40)
      expect(await db.collection('persons').countDocuments({ v: 2 })).to.equal(10)
      expect((await db.listCollections().toArray()).map((c) => c.name).sort()).to.deep.equal(['kept', 'persons'])
      const duplicate = await db
        .collection('persons')
        .insertOne({ project_id: 1, distinct_id: 'd3' })
        .catch((e: { code: number }) => e.code)
      expect(duplicate).to.equal(11000)
    } finally {
      await shut(running)
    }
  })

  it('loses no acknowledged write when the process is killed with SIGKILL', async function () {
    this.timeout(30_000)
    const { child, url } = await startEmbeddedCli(dataDir)
    const client = new MongoClient(url)
    await client.connect()
    const events = client.db('app').collection('events')
    await events.createIndex({ project_id: 1, uuid: 1 }, { unique: true })
    for (let batch = 0; batch < 10; batch++) {
      await events.insertMany(
        Array.from({ length: 100 }, (_, i) => ({ project_id: 1, uuid: `e${batch * 100 + i}`, n: 0 })),
      )
    }
    await events.updateMany({ uuid: { $regex: /^e1/ } }, { $inc: { n: 1 } })
    await events.deleteOne({ uuid: 'e999' })
    await events.insertOne({ project_id: 1, uuid: 'last' })
    const gone = exited(child)
    child.kill('SIGKILL')
    await gone
    await client.close().catch(() => undefined)

    const running = await open(dataDir)
    try {
      const c = running.client.db('app').collection('events')
      expect(await c.countDocuments()).to.equal(1000)
      expect(await c.countDocuments({ n: 1 })).to.equal(111)
      expect(await c.findOne({ uuid: 'e999' })).to.equal(null)
      expect(await c.findOne({ uuid: 'last' }, { projection: { _id: 0 } })).to.deep.equal({
        project_id: 1,
        uuid: 'last',
      })
      expect(await c.insertOne({ project_id: 1, uuid: 'e5' }).catch((e: { code: number }) => e.code)).to.equal(11000)
    } finally {
      await shut(running)
    }
  })

  it('stops cleanly on SIGTERM, flushing the log', async function () {
    this.timeout(30_000)
    const { child, url, output } = await startEmbeddedCli(dataDir)
    const client = new MongoClient(url)
    await client.connect()
    await client
      .db('app')
      .collection('c')
      .insertOne({ _id: 'kept' } as Document)
    await client.close()
    const gone = exited(child)
    child.kill('SIGTERM')
    expect(await gone).to.equal(0)
    expect(output()).to.match(/stopped \(SIGTERM\)/)
    expect(existsSync(path.join(dataDir, 'mongod.lock'))).to.equal(false)
    const running = await open(dataDir)
    try {
      expect(await running.client.db('app').collection('c').countDocuments()).to.equal(1)
    } finally {
      await shut(running)
    }
  })

  // These two are about the in-memory engine's log and snapshots; the lmdb engine has neither.
  it('ignores a torn record at the end of the log and keeps appending after it', async () => {
    let running = await open(dataDir, MEMORY)
    await running.client
      .db('app')
      .collection('c')
      .insertMany([{ n: 1 }, { n: 2 }])
    await shut(running)
    const [wal] = readdirSync(dataDir).filter((f) => f.startsWith('wal-'))
    appendFileSync(path.join(dataDir, wal), Buffer.from([0x40, 0, 0, 0, 1, 2, 3]))
    running = await open(dataDir, MEMORY)
    await running.client.db('app').collection('c').insertOne({ n: 3 })
    await shut(running)
    running = await open(dataDir, MEMORY)
    try {
      expect(await running.client.db('app').collection('c').countDocuments()).to.equal(3)
    } finally {
      await shut(running)
    }
  })

  it('compacts the log into a snapshot so it does not grow forever', async () => {
    let running = await open(dataDir, { ...MEMORY, compactMinBytes: 32 * 1024 })
    const c = running.client.db('app').collection<{ _id: number; v: number; pad: string }>('c')
    await c.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, v: 0, pad: 'x'.repeat(200) })))
    for (let round = 1; round <= 100; round++) await c.updateMany({}, { $set: { v: round } })
    await running.client.db('app').command({ compact: 'c' })
    const files = readdirSync(dataDir)
    const snapshots = files.filter((f) => f.startsWith('snapshot-'))
    const logBytes = files
      .filter((f) => f.startsWith('wal-'))
      .reduce((sum, f) => sum + statSync(path.join(dataDir, f)).size, 0)
    expect(snapshots).to.have.length(1)
    expect(logBytes).to.be.below(64 * 1024)
    await shut(running)
    writeFileSync(path.join(dataDir, 'snapshot-99999999.tmp'), 'interrupted compaction')
    running = await open(dataDir, MEMORY)
    try {
      const docs = await running.client
        .db('app')
        .collection('c')
        .find({}, { projection: { v: 1 } })
        .toArray()
      expect(docs).to.have.length(20)
      expect(docs.every((d) => d.v === 100)).to.equal(true)
      expect(existsSync(path.join(dataDir, 'snapshot-99999999.tmp'))).to.equal(false)
    } finally {
      await shut(running)
    }
  })

  it('keeps the folder 0700 and every file in it 0600, across log compaction, and narrows an older folder at start', async () => {
    const modes = (dir: string) =>
      Object.fromEntries([
        ['.', statSync(dir).mode & 0o777],
        ...readdirSync(dir).map((f) => [f.replace(/\d{8}/, 'N'), statSync(path.join(dir, f)).mode & 0o777]),
      ])
    const fresh = path.join(dataDir, 'created', 'mongo')
    let running = await open(fresh, { compactMinBytes: 16 * 1024, ...MEMORY })
    const c = running.client.db('app').collection('c')
    await c.insertOne({ secret: 'phs_x' })
    expect(modes(fresh)).to.deep.equal({ '.': 0o700, 'mongod.lock': 0o600, 'mongod.sock': 0o600, 'wal-N.log': 0o600 })
    for (let round = 0; round < 40; round++) await c.insertOne({ pad: 'x'.repeat(1000) })
    await running.client.db('app').command({ compact: 'c' })
    expect(readdirSync(fresh).filter((f) => f.startsWith('snapshot-'))).to.have.length(1)
    expect(modes(fresh)).to.deep.equal({
      '.': 0o700,
      'mongod.lock': 0o600,
      'mongod.sock': 0o600,
      'snapshot-N.bin': 0o600,
      'wal-N.log': 0o600,
    })
    await shut(running)

    // As an older version left it: a 0755 folder of 0644 files.
    chmodSync(fresh, 0o755)
    for (const f of readdirSync(fresh)) chmodSync(path.join(fresh, f), 0o644)
    running = await open(fresh, MEMORY)
    try {
      expect(await running.client.db('app').collection('c').countDocuments()).to.equal(41)
      expect(modes(fresh)).to.deep.equal({
        '.': 0o700,
        'mongod.lock': 0o600,
        'mongod.sock': 0o600,
        'snapshot-N.bin': 0o600,
        'wal-N.log': 0o600,
      })
    } finally {
      await shut(running)
    }
  })

  it('refuses a data folder already in use by a live server', async () => {
    const running = await open(dataDir)
    try {
      const error = await startEmbeddedMongo({ dataDir, runIn: 'current-thread' }).then(
        (s) => s.close().then(() => 'started'),
        (e: Error) => e.message,
      )
      expect(error).to.match(/already open|in use/)
    } finally {
      await shut(running)
    }
  })
})
