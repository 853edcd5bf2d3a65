/**
 * An index build on the embedded server (docs/embedded-mongo.md quotes the results): N realistic
 * stored events (event-documents.ts) through the driver, then createIndex({created_at: 1}) while
 * another connection sends a findOne by _id every 20 ms. Prints the build's wall time and CPU
 * (every thread of this process: the server runs in a worker thread, as in the service) and the
 * lookups' latency, idle and during the build. TREE runs another checkout's server code (an A/B
 * run of two trees in one command):
 *
 *   npx tsx test/bench/index-build.ts 200000 lmdb
 *   TREE=/path/to/other/checkout npx tsx test/bench/index-build.ts 200000 memory
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import { eventDocument } from './event-documents.ts'

const [countArg, engine = 'lmdb'] = process.argv.slice(2)
const count = Number(countArg ?? 200_000)
const tree = process.env.TREE ?? path.resolve(import.meta.dirname, '../..')
const { startEmbeddedMongo } = (await import(
  path.join(tree, 'core/storage/embedded/index.ts')
)) as typeof import('../../core/storage/embedded/index.ts')

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-index-build-bench-'))
const server = await startEmbeddedMongo({ dataDir, engine: engine as 'lmdb' | 'memory', syncIntervalMs: 60_000 })
const client = await new MongoClient(server.url, { maxPoolSize: 4 }).connect()
try {
  const events = client.db('bench').collection('events')
  for (let start = 0; start < count; start += 5000) {
    const end = Math.min(count, start + 5000)
    await events.insertMany(Array.from({ length: end - start }, (_, k) => eventDocument(start + k)))
  }
  // open the pool's connections first: a lookup must not wait for a handshake
  await Promise.all(Array.from({ length: 4 }, () => client.db('bench').command({ ping: 1 })))
  const ids = (
    await events
      .find({}, { projection: { _id: 1 } })
      .limit(1000)
      .toArray()
  ).map((d) => d._id)
  const lookup = async (i: number) => {
    const started = performance.now()
    await events.findOne({ _id: ids[i % ids.length] })
    return performance.now() - started
  }
  const idle: number[] = []
  for (let i = 0; i < 100; i++) {
    idle.push(await lookup(i))
    await pause(20)
  }
  const cpu = process.cpuUsage()
  const started = performance.now()
  let built = false
  const build = events.createIndex({ created_at: 1 }).then(() => {
    built = true
  })
  const during: number[] = []
  while (!built) {
    during.push(await lookup(during.length))
    await pause(20)
  }
  await build
  const wallS = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const cpuS = (used.user + used.system) / 1e6
  idle.sort((a, b) => a - b)
  during.sort((a, b) => a - b)
  const ms = (v: number) => `${v.toFixed(1)} ms`
  console.log(
    `${path.basename(tree)} ${engine}, ${count} events: build ${wallS.toFixed(2)} s wall, ${cpuS.toFixed(2)} s CPU ` +
      `(${((cpuS * 1e6) / count).toFixed(1)} µs per event); findOne idle p50 ${ms(quantile(idle, 0.5))}, max ${ms(quantile(idle, 1))}; during the build ` +
      `${during.length} answered, p50 ${ms(quantile(during, 0.5))}, p99 ${ms(quantile(during, 0.99))}, max ${ms(quantile(during, 1))}`,
  )
} finally {
  await client.close()
  await server.close()
  rmSync(dataDir, { recursive: true, force: true })
}
