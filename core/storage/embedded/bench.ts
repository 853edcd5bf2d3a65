/**
 * Measures the embedded server through the real driver, to choose where it runs and to document
 * its footprint (docs/embedded-mongo.md quotes the results):
 *
 *   npx tsx core/storage/embedded/bench.ts modes     # current thread vs worker thread vs child process
 *   node --expose-gc --import tsx core/storage/embedded/bench.ts memory 1000000
 *   npx tsx core/storage/embedded/bench.ts readers 3   # lmdb reader threads 0, 1, 2, interleaved, 3 rounds
 *   npx tsx core/storage/embedded/bench.ts handoff 3   # what sending a command to the writer thread costs
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

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : Number.NaN
}

/** `fn` run `count` times one after another: latency p50 and p99 (ms) and this process's CPU per call (µs, all threads). */
async function sequential(count: number, fn: (i: number) => Promise<unknown>): Promise<Record<string, number>> {
  const latencies: number[] = []
  const cpu = process.cpuUsage()
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    await fn(i)
    latencies.push(performance.now() - start)
  }
  const used = process.cpuUsage(cpu)
  latencies.sort((a, b) => a - b)
  return {
    p50ms: Number(percentile(latencies, 0.5).toFixed(3)),
    p99ms: Number(percentile(latencies, 0.99).toFixed(3)),
    cpuUsPerOp: Math.round((used.user + used.system) / count),
  }
}

const LOAD_MS = 8000

/** A capture-like event: ~1 KB of BSON, 30 properties. */
function captureEvent(tag: string, i: number): Document {
  const properties: Document = { $browser: 'Firefox', $os: 'Linux', $current_url: `https://example.com/p/${i % 300}` }
  for (let p = 0; p < 27; p++) properties[`prop_${p}`] = `value ${(i * 31 + p) % 1000} ${'x'.repeat(12)}`
  return {
    project_id: 1,
    uuid: `${tag}-${i}`,
    event: '$pageview',
    distinct_id: `d${i % 20000}`,
    timestamp: new Date(),
    properties,
  }
}

/**
 * Reader threads against one thread: flag-style person lookups idle and while capture-like
 * batches of 500 events are inserted back to back on other connections, and small writes idle
 * (what the hand-off to the writer thread costs), through the driver, the server on a worker
 * thread as the service runs it.
 */
async function readers(rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (const count of [0, 1, 2]) {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-mongo-readers-'))
      const server = await startEmbeddedMongo({ dataDir, readers: count })
      const client = new MongoClient(server.url, { maxPoolSize: 20 })
      const db = client.db('bench')
      const persons = db.collection('persons')
      const events = db.collection('events')
      await events.createIndex({ project_id: 1, uuid: 1 }, { unique: true })
      await events.createIndex({ project_id: 1, timestamp: -1 })
      await persons.createIndex({ project_id: 1, distinct_id: 1 }, { unique: true })
      for (let b = 0; b < 20; b++)
        await persons.insertMany(
          Array.from({ length: 1000 }, (_, i) => ({ project_id: 1, distinct_id: `d${b * 1000 + i}`, version: 0 })),
        )
      const lookup = (i: number) => persons.findOne({ project_id: 1, distinct_id: `d${(i * 7919) % 20000}` })
      const idleLookup = await sequential(3000, lookup)
      const idleInsert = await sequential(2000, (i) => db.collection('small').insertOne({ i }))
      // capture on two connections back to back for LOAD_MS, lookups paced at one per 10 ms meanwhile
      let loading = true
      let inserted = 0
      const cpu = process.cpuUsage()
      const loadStart = performance.now()
      const load = Promise.all(
        [0, 1].map(async (writer) => {
          for (let b = 0; loading; b++) {
            await events.insertMany(
              Array.from({ length: 500 }, (_, i) => captureEvent(`r${round}-w${writer}-${b}`, i)),
              { ordered: false },
            )
            inserted += 500
          }
        }),
      )
      const latencies: number[] = []
      const lookups: Promise<unknown>[] = []
      for (let i = 0; performance.now() - loadStart < LOAD_MS; i++) {
        const start = performance.now()
        lookups.push(lookup(i).then(() => latencies.push(performance.now() - start)))
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      await Promise.all(lookups)
      loading = false
      await load
      const loadSeconds = (performance.now() - loadStart) / 1000
      const used = process.cpuUsage(cpu)
      latencies.sort((a, b) => a - b)
      console.log(
        JSON.stringify({
          round,
          readers: count,
          idleLookup,
          idleInsertOne: idleInsert,
          lookupDuringCapture: {
            count: latencies.length,
            p50ms: Number(percentile(latencies, 0.5).toFixed(3)),
            p99ms: Number(percentile(latencies, 0.99).toFixed(3)),
          },
          captureDocsPerSec: Math.round(inserted / loadSeconds),
          cpuUsPerCapturedDoc: Math.round((used.user + used.system) / inserted),
        }),
      )
      await client.close()
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/**
 * The cost of the hand-off to the writer thread: with reader threads, ping is answered by the
 * thread holding the connection and getParameter by the writer, so their difference is one round
 * trip between threads; with none, both run on the one thread. Also the time to start.
 */
async function handoff(rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (const count of [0, 1]) {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-mongo-handoff-'))
      const started = performance.now()
      const server = await startEmbeddedMongo({ dataDir, readers: count })
      const startMs = Math.round(performance.now() - started)
      const client = await MongoClient.connect(server.url)
      const admin = client.db('admin')
      await sequential(500, () => admin.command({ ping: 1 }))
      const ping = await sequential(5000, () => admin.command({ ping: 1 }))
      const getParameter = await sequential(5000, () => admin.command({ getParameter: 1, ttlMonitorSleepSecs: 1 }))
      console.log(JSON.stringify({ round, readers: count, startMs, ping, getParameter }))
      await client.close()
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

const [what, arg] = process.argv.slice(2)
if (what === 'memory') await memory(Number(arg ?? 1_000_000))
else if (what === 'readers') await readers(Number(arg ?? 3))
else if (what === 'handoff') await handoff(Number(arg ?? 3))
else await modes()
