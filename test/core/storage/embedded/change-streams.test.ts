import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import type { ChangeStreamDocument, Document, ResumeToken } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../../../../core/storage/embedded/index.ts'

/** The embedded store's own change history (its oplog window); the shared behaviour is in conformance/. */
describe('embedded MongoDB change history', function () {
  this.timeout(30_000)
  let dataDir: string
  let server: EmbeddedMongo
  let client: MongoClient

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-changes-'))
    server = await startEmbeddedMongo({ dataDir, replSetName: 'rs0', syncIntervalMs: 60_000 })
    client = await MongoClient.connect(server.url)
  })

  after(async () => {
    await client?.close()
    await server?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  async function tokenOfNextInsert(
    coll: ReturnType<ReturnType<MongoClient['db']>['collection']>,
    doc: Document,
  ): Promise<ResumeToken> {
    const stream = coll.watch([], { maxAwaitTimeMS: 50 })
    try {
      await stream.tryNext()
      await coll.insertOne(doc)
      return ((await stream.next()) as ChangeStreamDocument)._id
    } finally {
      await stream.close()
    }
  }

  /** The full document of the first change after `token`. */
  async function firstDocumentAfter(
    coll: ReturnType<ReturnType<MongoClient['db']>['collection']>,
    token: ResumeToken,
  ): Promise<Document> {
    const stream = coll.watch([], { resumeAfter: token, maxAwaitTimeMS: 50 })
    try {
      return ((await stream.next()) as ChangeStreamDocument & { fullDocument: Document }).fullDocument
    } finally {
      await stream.close()
    }
  }

  it('is bounded by bytes: after ~24 MB of large documents an old resume point is gone (286), a recent one resumes', async () => {
    const coll = client.db('changes').collection('big')
    const early = await tokenOfNextInsert(coll, { n: -1 })
    const big = 'x'.repeat(1024 * 1024)
    for (let n = 0; n < 24; n++) await coll.insertOne({ n, big })
    const recent = await tokenOfNextInsert(coll, { n: 100 })
    await coll.insertOne({ n: 101 })

    const lost = coll.watch([], { resumeAfter: early, maxAwaitTimeMS: 50 })
    const error = await lost.next().then(
      () => undefined,
      (e: { code?: number }) => e,
    )
    await lost.close()
    expect(error?.code, 'resuming before the kept history').to.equal(286)

    expect((await firstDocumentAfter(coll, recent)).n).to.equal(101)
  })

  it('keeps small changes by count: a stream resumes after a thousand small inserts', async () => {
    const coll = client.db('changes').collection('small')
    const start = await tokenOfNextInsert(coll, { n: 0 })
    await coll.insertMany(Array.from({ length: 1000 }, (_, i) => ({ n: i + 1 })))
    expect((await firstDocumentAfter(coll, start)).n).to.equal(1)
  })

  it('answers a waiting getMore when a change passes its filter or the wait is over, not at every write', async () => {
    const db = client.db('changes')
    const watched = db.collection('watched')
    const other = db.collection('other')
    const getMores = async () => Number((await db.admin().command({ serverStatus: 1 })).metrics.commands.getMore.total)
    const stream = watched.watch([{ $match: { operationType: { $in: ['update', 'delete'] } } }], {
      maxAwaitTimeMS: 5_000,
    })
    try {
      await watched.insertOne({ _id: 'kept', n: 0 } as Document)
      const next = stream.next()
      await new Promise((resolve) => setTimeout(resolve, 200)) // its aggregate answered, its getMore waits
      const before = await getMores()
      // writes the filter drops (another collection, an insert) do not answer the waiting getMore
      for (let n = 0; n < 50; n++) await other.insertOne({ n })
      await watched.insertOne({ _id: 'inserted' } as Document)
      // at most the first getMore, had it not been sent yet (before, one per write: 51)
      expect((await getMores()) - before).to.be.at.most(1)
      await watched.updateOne({ _id: 'kept' } as Document, { $set: { n: 1 } })
      const change = (await next) as Document
      expect(change.operationType).to.equal('update')
      expect(change.documentKey).to.deep.equal({ _id: 'kept' })
      expect(change.updateDescription?.updatedFields).to.deep.equal({ n: 1 })
      await watched.deleteOne({ _id: 'inserted' } as Document)
      expect(((await stream.next()) as ChangeStreamDocument<Document>).operationType).to.equal('delete')
    } finally {
      await stream.close()
    }
  })

  it('ends a stream when its collection is dropped, even one whose filter keeps only inserts', async () => {
    const coll = client.db('changes').collection('dropped')
    await coll.insertOne({ n: 0 })
    const stream = coll.watch([{ $match: { operationType: 'insert' } }], { maxAwaitTimeMS: 50 })
    try {
      await stream.tryNext()
      await coll.drop()
      const deadline = Date.now() + 5_000
      while (!stream.closed && Date.now() < deadline) await stream.tryNext()
      expect(stream.closed, 'the drop invalidated the stream').to.equal(true)
    } finally {
      await stream.close()
    }
  })
})
