import { expect } from 'chai'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient, type Db } from 'mongodb'
import { startEmbeddedMongo } from '../../../../../core/storage/embedded/index.ts'

/**
 * What a power cut leaves of the lmdb data file, built by hand: the file as lmdb had flushed it,
 * plus a later commit that reached the file only in part. lmdb keeps three meta records (after a
 * 24-byte page header): one per
 * commit in pages 0 and 1 (by txnid parity), and the last flushed commit's in the second half of
 * page 0. A commit's own record is marked unflushed (MDB_OVERLAPPINGSYNC in its flags) and carries
 * the kernel's boot id; after a reboot, an unflushed newest record is ignored.
 */
const PAGE = 8192
const HEADER = 24
const SLOTS = { first: HEADER, flushed: PAGE / 2 + HEADER, second: PAGE + HEADER }
const UNFLUSHED = 0x1000

interface Meta {
  txnid: bigint
  unflushed: boolean
}

function meta(file: Buffer, at: number): Meta {
  return { txnid: file.readBigUInt64LE(at + 128), unflushed: (file.readUInt16LE(at + 28) & UNFLUSHED) !== 0 }
}

interface Event {
  _id: number
  project_id: number
  n: number
  pad?: string
}

const dataFile = (dataDir: string) => path.join(dataDir, 'lmdb', 'data.mdb')

async function withDb<T>(dataDir: string, fn: (db: Db) => Promise<T>): Promise<T> {
  const server = await startEmbeddedMongo({ dataDir, engine: 'lmdb', runIn: 'current-thread' })
  const client = new MongoClient(server.url)
  try {
    await client.connect()
    return await fn(client.db('app'))
  } finally {
    await client.close()
    await server.close()
  }
}

describe('embedded MongoDB lmdb engine: power loss', function () {
  this.timeout(60_000)
  let dataDir: string
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-power-'))
  })
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }))

  it('answers a j: true write once its commit is flushed: the flushed meta record holds it', async () => {
    await withDb(dataDir, async (db) => {
      const c = db.collection('c')
      for (let i = 0; i < 5; i++) {
        await c.insertOne({ i }, { writeConcern: { j: true } })
        const file = readFileSync(dataFile(dataDir))
        const newest = [meta(file, SLOTS.first), meta(file, SLOTS.second)].sort((a, b) => Number(b.txnid - a.txnid))[0]
        const flushed = meta(file, SLOTS.flushed)
        expect(flushed.unflushed).to.equal(false)
        expect(flushed.txnid >= newest.txnid, `flushed ${flushed.txnid}, newest ${newest.txnid}`).to.equal(true)
      }
    })
  })

  it('opens at the last flushed commit when a later one reached the file only in part before a reboot', async () => {
    const before = Array.from({ length: 300 }, (_, i) => ({ _id: i, project_id: 1, n: i, pad: 'a'.repeat(500) }))
    await withDb(dataDir, async (db) => {
      await db.collection<Event>('events').createIndex({ project_id: 1, n: 1 })
      await db.collection<Event>('events').insertMany(before, { writeConcern: { j: true } })
    })
    const flushedImage = readFileSync(dataFile(dataDir))
    await withDb(dataDir, async (db) => {
      // one commit: new pages for its documents, index entries and the B+tree paths to them
      await db
        .collection<Event>('events')
        .insertMany(
          Array.from({ length: 300 }, (_, i) => ({ _id: 1000 + i, project_id: 1, n: 1000 + i, pad: 'b'.repeat(500) })),
        )
    })
    const after = readFileSync(dataFile(dataDir))
    const lost = [meta(after, SLOTS.first), meta(after, SLOTS.second)].sort((a, b) => Number(b.txnid - a.txnid))[0]
    expect(lost.unflushed, 'a commit writes its meta record marked unflushed').to.equal(true)
    expect(lost.txnid > meta(flushedImage, SLOTS.flushed).txnid).to.equal(true)

    // The power cut: the flushed record is the earlier one, the newer commit's record was written in
    // an earlier boot, and every page that commit wrote is garbage (torn, or never on the disk).
    const crashed = Buffer.from(after)
    flushedImage.copy(crashed, PAGE / 2, PAGE / 2, PAGE)
    const lostSlot = meta(after, SLOTS.first).txnid === lost.txnid ? SLOTS.first : SLOTS.second
    crashed.writeBigInt64LE(crashed.readBigInt64LE(lostSlot + 136) + 1n, lostSlot + 136)
    let damaged = 0
    for (let page = 2; page * PAGE < crashed.length; page++) {
      const start = page * PAGE
      const same =
        start + PAGE <= flushedImage.length &&
        crashed.subarray(start, start + PAGE).equals(flushedImage.subarray(start, start + PAGE))
      if (same) continue
      crashed.fill(0xa5, start, start + PAGE)
      damaged += 1
    }
    expect(damaged, 'the lost commit wrote pages').to.be.greaterThan(20)
    writeFileSync(dataFile(dataDir), crashed)

    await withDb(dataDir, async (db) => {
      const events = db.collection<Event>('events')
      expect(await events.countDocuments()).to.equal(300)
      expect(await events.find({}, { sort: { _id: 1 } }).toArray()).to.deep.equal(before)
      expect(await events.find({ project_id: 1, n: { $gte: 250 } }).toArray()).to.have.length(50)
      await events.insertOne({ _id: 5000, project_id: 1, n: 5000 }, { writeConcern: { j: true } })
      expect(await events.countDocuments({ n: { $gte: 300 } })).to.equal(1)
    })
  })
  it('refuses to start, naming the file, when a meta page is damaged (lmdb itself would crash)', async () => {
    await withDb(dataDir, async (db) => {
      await db.collection('c').insertOne({ x: 1 }, { writeConcern: { j: true } })
    })
    const good = readFileSync(dataFile(dataDir))
    for (const page of [0, 1]) {
      const damaged = Buffer.from(good)
      damaged.fill(0xa5, page * PAGE, (page + 1) * PAGE)
      writeFileSync(dataFile(dataDir), damaged)
      const error = await startEmbeddedMongo({ dataDir, engine: 'lmdb', runIn: 'current-thread' }).then(
        async (server) => {
          await server.close()
          return undefined
        },
        (e: Error) => e,
      )
      expect(error?.message).to.include(`${dataFile(dataDir)} is damaged (meta page ${page} is not an LMDB meta page)`)
    }
    writeFileSync(dataFile(dataDir), good)
    expect(await withDb(dataDir, (db) => db.collection('c').countDocuments())).to.equal(1)
  })
})
