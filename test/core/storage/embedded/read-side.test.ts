import { expect } from 'chai'
import path from 'node:path'
import { MongoClient, type Document } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../../../../core/storage/embedded/index.ts'
import { folderPerTest } from '../../../helpers/folders.ts'

/** A server over TCP with `readers` reader threads, and `clients` separate clients (connection pools) of it. */
async function serve(
  dataDir: string,
  readers: number,
  clients = 1,
): Promise<{ server: EmbeddedMongo; clients: MongoClient[]; close(): Promise<void> }> {
  const server = await startEmbeddedMongo({ dataDir, readers, tcp: { port: 0 }, syncIntervalMs: 60_000 })
  const opened = await Promise.all(
    Array.from({ length: clients }, () => MongoClient.connect(server.tcpUrl!, { directConnection: true })),
  )
  return {
    server,
    clients: opened,
    async close() {
      await Promise.all(opened.map((c) => c.close()))
      await server.close()
    },
  }
}

describe('embedded MongoDB reads beside writes (lmdb reader threads)', function () {
  this.timeout(120_000)
  let dataDir: string

  folderPerTest('hedgerow-readers-', (folder) => (dataDir = folder))

  /**
   * Sends one long update (tens of thousands of documents, one command, one transaction) and, once
   * it has been running a while, connects a second client and sends a findOne: whether the find was
   * answered before the update.
   */
  async function readDuringLongWrite(
    readers: number,
  ): Promise<{ readFirst: boolean; readMs: number; writeMs: number }> {
    const running = await serve(path.join(dataDir, String(readers)), readers)
    try {
      const db = running.clients[0].db('beside')
      await db.collection('big').insertMany(Array.from({ length: 50_000 }, (_, i) => ({ a: i, pad: 'x'.repeat(200) })))
      await db.collection('big').createIndex({ a: 1 })
      await db.collection('small').insertOne({ _id: 1 as never, ok: true })
      const events: string[] = []
      const started = performance.now()
      let writeMs = 0
      const write = db
        .collection('big')
        .updateMany({}, { $inc: { a: 100_000 } })
        .then(() => {
          writeMs = performance.now() - started
          events.push('write')
        })
      await new Promise((resolve) => setTimeout(resolve, 150))
      // a new client: its connections' handshakes must not wait behind the write either
      const readStart = performance.now()
      const reader = await MongoClient.connect(running.server.tcpUrl!, { directConnection: true })
      const doc = await reader
        .db('beside')
        .collection('small')
        .findOne({ _id: 1 as never })
      const readMs = performance.now() - readStart
      await reader.close()
      events.push('read')
      expect(doc?.ok).to.equal(true)
      await write
      expect(await db.collection('big').countDocuments({ a: { $gte: 100_000 } })).to.equal(50_000)
      return { readFirst: events[0] === 'read', readMs, writeMs }
    } finally {
      await running.close()
    }
  }

  it("answers a new client's handshake and read while a long write command runs, which one thread cannot", async () => {
    const beside = await readDuringLongWrite(1)
    // the update must have been long enough to tell: the read was sent 150 ms into it
    expect(beside.writeMs).to.be.above(600)
    expect(beside.readFirst, `read ${beside.readMs} ms, write ${beside.writeMs} ms`).to.equal(true)
    expect(beside.readMs).to.be.below(beside.writeMs / 2)
    const oneThread = await readDuringLongWrite(0)
    expect(oneThread.writeMs).to.be.above(600)
    expect(oneThread.readFirst, 'with one thread the read waits for the write').to.equal(false)
  })

  it('shows a read on one connection every write acknowledged on another', async () => {
    const running = await serve(dataDir, 1, 2)
    try {
      const [a, b] = running.clients.map((c) => c.db('ryw').collection<Document>('docs'))
      for (let i = 0; i < 300; i++) {
        await a.insertOne({ _id: i as never, v: 0 })
        expect(await b.findOne({ _id: i as never }), `insert ${i}`).to.deep.equal({ _id: i, v: 0 })
        await a.updateOne({ _id: i as never }, { $set: { v: i + 1 } })
        expect((await b.findOne({ _id: i as never }))?.v, `update ${i}`).to.equal(i + 1)
        if (i % 50 === 49) {
          expect(await b.countDocuments({})).to.equal(i + 1)
          expect(await b.estimatedDocumentCount()).to.equal(i + 1)
        }
      }
      await a.deleteOne({ _id: 7 as never })
      expect(await b.findOne({ _id: 7 as never })).to.equal(null)
    } finally {
      await running.close()
    }
  })

  it('sees collections and indexes the writer creates and drops', async () => {
    const running = await serve(dataDir, 1, 2)
    try {
      const [a, b] = running.clients.map((c) => c.db('catalog'))
      await a.collection('c').insertMany(Array.from({ length: 100 }, (_, i) => ({ k: i % 10 })))
      await a.collection('c').createIndex({ k: 1 }, { name: 'by_k' })
      // a hint naming the index fails on a reader that does not know it
      expect(await b.collection('c').countDocuments({ k: 3 }, { hint: 'by_k' })).to.equal(10)
      expect(await b.collection('c').distinct('k')).to.have.length(10)
      await a.collection('c').drop()
      expect(await b.collection('c').find({}).toArray()).to.deep.equal([])
      await a.collection('c').insertOne({ k: 42 })
      expect(await b.collection('c').countDocuments({ k: 42 })).to.equal(1)
    } finally {
      await running.close()
    }
  })

  it('serves a cursor over many batches, and kills it where it lives', async () => {
    const running = await serve(dataDir, 1)
    try {
      const db = running.clients[0].db('batches')
      const docs = db.collection<Document>('docs')
      await docs.insertMany(Array.from({ length: 5_000 }, (_, i) => ({ _id: i as never, v: i })))
      const seen: number[] = []
      const cursor = docs.find({}, { batchSize: 97 }).sort({ _id: 1 })
      for await (const doc of cursor) {
        seen.push(doc.v as number)
        // writes between the batches, as a live service makes them
        if (seen.length % 500 === 0) await docs.insertOne({ _id: (100_000 + seen.length) as never, v: -1 })
      }
      expect(seen.slice(0, 5_000)).to.deep.equal(Array.from({ length: 5_000 }, (_, i) => i))
      const grouped = await docs
        .aggregate([{ $match: { v: { $gte: 0 } } }, { $project: { v: 1 } }], { batchSize: 50 })
        .toArray()
      expect(grouped).to.have.length(5_000)

      const first = await db.command({ find: 'docs', batchSize: 2 })
      const id = first.cursor.id
      expect(Number(id)).to.not.equal(0)
      const more = await db.command({ getMore: id, collection: 'docs', batchSize: 3 })
      expect(more.cursor.nextBatch.map((d: Document) => d._id)).to.deep.equal([2, 3, 4])
      const killed = await db.command({ killCursors: 'docs', cursors: [id] })
      expect(killed.cursorsKilled.map(Number)).to.deep.equal([Number(id)])
      const gone = await db.command({ getMore: id, collection: 'docs' }).then(
        () => undefined,
        (e: { codeName?: string }) => e.codeName,
      )
      expect(gone).to.equal('CursorNotFound')
    } finally {
      await running.close()
    }
  })

  it('spreads reads over further reader threads, each keeping its cursors', async () => {
    const running = await serve(dataDir, 3)
    try {
      const docs = running.clients[0].db('spread').collection<Document>('docs')
      await docs.insertMany(Array.from({ length: 1_000 }, (_, i) => ({ _id: i as never })))
      // several cursors at once land on different threads; every getMore must find its own
      const all = await Promise.all(
        Array.from({ length: 6 }, () => docs.find({}, { batchSize: 10 }).sort({ _id: 1 }).toArray()),
      )
      for (const list of all) expect(list.map((d) => d._id)).to.deep.equal(Array.from({ length: 1_000 }, (_, i) => i))
      const status = await running.clients[0].db('admin').command({ serverStatus: 1 })
      expect(Number(status.metrics.commands.getMore.total)).to.be.at.least(6 * 99)
    } finally {
      await running.close()
    }
  })
})
