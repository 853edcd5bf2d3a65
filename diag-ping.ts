import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import { startMongo } from './test/bench/processes.ts'
const N = Number(process.env.N ?? 30000)
const dir = mkdtempSync(path.join(os.tmpdir(), 'diag-ping-'))
const mongo = await startMongo(path.join(dir, 'mongo'))
const client = await MongoClient.connect(mongo.url + (process.env.Q ?? ''))
const db = client.db('hedgerow')
for (let i = 0; i < 2000; i++) await db.command({ ping: 1 })
const c0 = process.cpuUsage()
for (let i = 0; i < N; i++) await db.command({ ping: 1 })
const c = process.cpuUsage(c0)
console.log(`ping ${((c.user + c.system) / N).toFixed(1)} µs CPU, ${(c.system/N).toFixed(1)} sys`)
await client.close(); await mongo.stop()
