import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient, MongoServerError } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../../../../../core/storage/embedded/index.ts'

describe('embedded MongoDB lmdb engine: keys longer than lmdb stores', () => {
  let dataDir: string
  let server: EmbeddedMongo
  let client: MongoClient
  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-key-limit-'))
    server = await startEmbeddedMongo({ dataDir, engine: 'lmdb', runIn: 'current-thread' })
    client = await MongoClient.connect(server.url)
  })
  after(async () => {
    await client.close()
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('refuses a document whose indexed value is too long with KeyTooLong (17280), storing nothing of it', async () => {
    const c = client.db('app').collection('c')
    await c.createIndex({ a: 1 })
    await c.insertOne({ _id: 1 as never, a: 'short' })
    const error = await c.insertOne({ _id: 2 as never, a: 'x'.repeat(5000) }).catch((e: unknown) => e)
    expect(error).to.be.instanceOf(MongoServerError)
    expect((error as MongoServerError).code).to.equal(17280)
    expect(await c.countDocuments()).to.equal(1)
    expect(await c.countDocuments({ a: 'short' })).to.equal(1)
    const update = await c.updateOne({ _id: 1 as never }, { $set: { a: 'y'.repeat(5000) } }).catch((e: unknown) => e)
    expect((update as MongoServerError).code).to.equal(17280)
    expect((await c.findOne({ _id: 1 as never }))?.a).to.equal('short')
  })
})
