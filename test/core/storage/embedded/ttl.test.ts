import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../../../../core/storage/embedded/index.ts'

describe('embedded MongoDB TTL indexes', () => {
  let dataDir: string
  let server: EmbeddedMongo
  let client: MongoClient

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-ttl-'))
    server = await startEmbeddedMongo({ dataDir })
    client = new MongoClient(server.url)
    await client.connect()
  })

  after(async () => {
    await client.close()
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("removes documents whose indexed date is older than expireAfterSeconds, on the monitor's schedule", async function () {
    this.timeout(10_000)
    const admin = client.db('admin')
    const before = await admin.command({ getParameter: 1, ttlMonitorSleepSecs: 1 })
    expect(before.ttlMonitorSleepSecs).to.equal(60)
    const events = client.db('app').collection('events')
    await events.createIndex({ timestamp: 1 }, { expireAfterSeconds: 3600 })
    const now = Date.now()
    await events.insertMany([
      { name: 'old', timestamp: new Date(now - 2 * 3600_000) },
      { name: 'older-in-array', timestamp: [new Date(now), new Date(now - 5 * 3600_000)] },
      { name: 'fresh', timestamp: new Date(now - 60_000) },
      { name: 'not a date', timestamp: 'yesterday' },
      { name: 'no field' },
    ])
    await admin.command({ setParameter: 1, ttlMonitorSleepSecs: 1 })
    const deadline = Date.now() + 5_000
    while ((await events.countDocuments()) > 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    expect(
      (await events.find({}, { projection: { _id: 0, name: 1 } }).toArray()).map((d) => d.name).sort(),
    ).to.deep.equal(['fresh', 'no field', 'not a date'])
  })
})
