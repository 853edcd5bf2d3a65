import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient, ReadPreference } from 'mongodb'
import { startMongo } from './test/bench/processes.ts'
import { WireClient } from './test/bench/wire-client.ts'

const N = Number(process.env.N ?? 20000)
const dir = mkdtempSync(path.join(os.tmpdir(), 'diag-find-'))
const mongo = await startMongo(path.join(dir, 'mongo'))
const client = await MongoClient.connect(mongo.url)
const db = client.db('hedgerow')
const persons = db.collection('persons')
await persons.createIndex({ project_id: 1, id: 1 }, { unique: true })
await persons.insertMany(Array.from({ length: 2000 }, (_, i) => ({ project_id: 1, id: `p${i}`, properties: { email: `u${i}@x.com`, plan: 'pro', n: i }, created_at: new Date().toISOString() })))
const wire = await WireClient.connect(mongo.url)
async function timeIt(name: string, op: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 2000; i++) await op(i)
  const c0 = process.cpuUsage(); const t0 = performance.now()
  for (let i = 0; i < N; i++) await op(i)
  const c = process.cpuUsage(c0); const t = performance.now() - t0
  console.log(`${name}: ${((c.user + c.system) / N).toFixed(1)} µs CPU (${(c.system / N).toFixed(1)} sys), ${(t * 1000 / N).toFixed(1)} µs wall per op`)
}
const cmd = (i: number) => ({ find: 'persons', filter: { project_id: 1, id: { $in: [`p${i % 2000}`] } }, projection: { _id: 0, id: 1, properties: 1, created_at: 1 }, batchSize: 2 })
for (let round = 0; round < 2; round++) {
  await timeIt('driver db.command find', (i) => db.command(cmd(i), { readPreference: ReadPreference.primary }))
  await timeIt('driver db.command find (no opts)', (i) => db.command(cmd(i)))
  await timeIt('driver ping', () => db.command({ ping: 1 }))
  await timeIt('bare wire find', (i) => wire.request(wire.message({ ...cmd(i), $db: 'hedgerow' })))
}
wire.close(); await client.close(); await mongo.stop()
