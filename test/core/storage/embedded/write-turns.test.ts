import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../../../../core/storage/embedded/index.ts'

describe('embedded MongoDB write turns', function () {
  this.timeout(60_000)
  let dataDir: string
  let server: EmbeddedMongo
  let client: MongoClient

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-turns-'))
    server = await startEmbeddedMongo({ dataDir, syncIntervalMs: 60_000 })
    client = await MongoClient.connect(server.url, { maxPoolSize: 10 })
  })

  after(async () => {
    await client?.close()
    await server?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('answers a read sent behind writes of other connections before those writes, once the one running ends', async () => {
    const db = client.db('turns')
    const big = db.collection('big')
    await big.insertMany(Array.from({ length: 40_000 }, (_, i) => ({ a: i, b: `value ${i}` })))
    await db.collection('small').insertOne({ _id: 1 as never, ok: true })
    // one open connection per command below, so that none waits for a connection handshake
    await Promise.all(Array.from({ length: 8 }, () => db.command({ ping: 1 })))
    const finished: string[] = []
    // small commands that take the server long (tens of ms each)
    const updates = [0, 1, 2, 3].map((n) => big.updateMany({}, { $inc: { a: 1 }, $set: { [`by${n}`]: true } }).then(() => finished.push(`update ${n}`)))
    // sent once all four have reached the server and the first runs
    await new Promise((resolve) => setTimeout(resolve, 20))
    const read = db.collection('small').findOne({ _id: 1 as never }).then((doc) => finished.push(`find ${String(doc?.ok)}`))
    await Promise.all([...updates, read])
    // every write is applied and answered; the read waited for the write running when it came (on
    // a loaded machine perhaps the next), not for all of them
    expect(await big.countDocuments({ by0: true, by1: true, by2: true, by3: true, a: { $gte: 4 } })).to.equal(40_000)
    expect(finished.indexOf('find true'), finished.join(', ')).to.be.at.most(2)
  })
})
