/**
 * Measures the embedded server through the real driver, to choose where it runs and to document
 * its footprint (docs/embedded-mongo.md quotes the results):
 *
 *   npx tsx core/storage/embedded/bench.ts modes     # current thread vs worker thread vs child process
 *   node --expose-gc --import tsx core/storage/embedded/bench.ts memory 1000000
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient, type Collection, type Document } from 'mongodb'
import { startEmbeddedMongo } from './index.ts'

interface Target {
  url: string
  close(): Promise<void>
}

async function startTarget(mode: string, dataDir: string): Promise<Target> {
  if (mode === 'current-thread' || mode === 'worker') return startEmbeddedMongo({ dataDir, runIn: mode })
  const main = path.join(import.meta.dirname, 'main.ts')
  const child = spawn(process.execPath, ['--import', 'tsx', main, '--port', '0', '--data', dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = await new Promise<string>((resolve) => {
    let out = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const found = /mongodb:\/\/\S+/.exec(out)
      if (found) resolve(found[0])
    })
  })
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/** Keeps the calling thread busy `busyMs` out of every `periodMs`, like a loaded service. */
function busyLoop(busyMs: number, periodMs: number): () => void {
  const timer = setInterval(() => {
    const end = performance.now() + busyMs
    while (performance.now() < end) Math.sqrt(Math.random())
  }, periodMs)
  return () => clearInterval(timer)
}

async function timed(fn: () => Promise<number>): Promise<number> {
  const start = performance.now()
  const ops = await fn()
  return Math.round(ops / ((performance.now() - start) / 1000))
}

async function workload(
  events: Collection<Document>,
  persons: Collection<Document>,
  tag: string,
): Promise<Record<string, number>> {
  const insert = await timed(async () => {
    for (let b = 0; b < 20; b++) {
      await events.insertMany(
        Array.from({ length: 500 }, (_, i) => ({
          project_id: 1,
          uuid: `${tag}-${b}-${i}`,
          event: '$pageview',
          distinct_id: `u${i % 50}`,
          timestamp: new Date(),
          properties: { $browser: 'Firefox', path: `/p/${i}` },
        })),
        { ordered: false },
      )
    }
    return 10_000
  })
  const lookup = await timed(async () => {
    for (let i = 0; i < 3000; i++) await persons.findOne({ project_id: 1, distinct_id: `d${(i * 7919) % 20000}` })
    return 3000
  })
  const concurrent = await timed(async () => {
    for (let round = 0; round < 60; round++) {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          persons.findOne({ project_id: 1, distinct_id: `d${(round * 50 + i) % 20000}` }),
        ),
      )
    }
    return 3000
  })
  const update = await timed(async () => {
    for (let i = 0; i < 2000; i++)
      await persons.updateOne(
        { project_id: 1, distinct_id: `d${i}` },
        { $set: { 'properties.seen': i }, $inc: { version: 1 } },
      )
    return 2000
  })
  return { insertDocsPerSec: insert, lookupsPerSec: lookup, concurrentLookupsPerSec: concurrent, updatesPerSec: update }
}

async function modes(): Promise<void> {
  for (const mode of ['current-thread', 'worker', 'child-process']) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-mongo-'))
    const target = await startTarget(mode, dataDir)
    const client = new MongoClient(target.url, { maxPoolSize: 50 })
    const db = client.db('bench')
    await db.collection('events').createIndex({ project_id: 1, uuid: 1 }, { unique: true })
    await db.collection('persons').createIndex({ project_id: 1, distinct_id: 1 }, { unique: true })
    for (let b = 0; b < 20; b++) {
      await db.collection('persons').insertMany(
        Array.from({ length: 1000 }, (_, i) => ({
          project_id: 1,
          distinct_id: `d${b * 1000 + i}`,
          version: 0,
          properties: {},
        })),
      )
    }
    const idle = await workload(db.collection('events'), db.collection('persons'), 'idle')
    const stop = busyLoop(8, 10)
    const busy = await workload(db.collection('events'), db.collection('persons'), 'busy')
    stop()
    console.log(JSON.stringify({ mode, idle, callerBusy80pct: busy }))
    await client.close()
    await target.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** Heap plus buffer memory of this isolate after a full collection (needs --expose-gc). */
function liveBytes(): number {
  globalThis.gc?.()
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

async function memory(count: number): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-mongo-mem-'))
  // On this thread, so that the server's live memory can be measured (run with --expose-gc).
  const target = await startTarget('current-thread', dataDir)
  const client = new MongoClient(target.url)
  const persons = client.db('bench').collection('persons')
  await persons.createIndex({ project_id: 1, distinct_id: 1 }, { unique: true })
  const liveBefore = liveBytes()
  const rssBefore = process.memoryUsage().rss
  const start = performance.now()
  for (let b = 0; b < count / 1000; b++) {
    await persons.insertMany(
      Array.from({ length: 1000 }, (_, i) => ({
        project_id: 1 + (i % 3),
        distinct_id: `user-${b * 1000 + i}`,
        version: 1,
        created_at: new Date(),
        properties: { email: `u${i}@example.com`, plan: 'free' },
      })),
    )
  }
  const insertSeconds = (performance.now() - start) / 1000
  const liveAfter = liveBytes()
  const rssAfter = process.memoryUsage().rss
  const t0 = performance.now()
  for (let i = 0; i < 1000; i++)
    await persons.findOne({ project_id: 1 + (i % 3), distinct_id: `user-${(i * 997) % count}` })
  const lookupMs = (performance.now() - t0) / 1000
  const sample = await persons.findOne({}, { projection: { _id: 0 } })
  const files = readdirSync(dataDir)
    .map((f) => statSync(path.join(dataDir, f)).size)
    .reduce((a, b) => a + b, 0)
  console.log(
    JSON.stringify({
      documents: count,
      sample,
      insertDocsPerSec: Math.round(count / insertSeconds),
      rssGrowthMiB: Math.round((rssAfter - rssBefore) / 1048576),
      liveGrowthMiB: Math.round((liveAfter - liveBefore) / 1048576),
      liveBytesPerDoc: Math.round((liveAfter - liveBefore) / count),
      lookupMsAvg: Number(lookupMs.toFixed(3)),
      dataFolderMiB: Math.round(files / 1048576),
    }),
  )
  await client.close()
  const closeStart = performance.now()
  await target.close()
  const closeMs = performance.now() - closeStart
  const reopenStart = performance.now()
  const reopened = await startTarget('worker', dataDir)
  console.log(JSON.stringify({ closeMs: Math.round(closeMs), restartMs: Math.round(performance.now() - reopenStart) }))
  await reopened.close()
  rmSync(dataDir, { recursive: true, force: true })
}

const [what, arg] = process.argv.slice(2)
if (what === 'memory') await memory(Number(arg ?? 1_000_000))
else await modes()
