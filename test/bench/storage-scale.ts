/**
 * storage_scale (npm run bench:storage; minutes to hours, not part of CI): realistic stored event
 * documents (event-documents.ts) inserted through the driver into the embedded server, one child
 * process per engine, then its anonymous memory, data folder size per event, restart time and the
 * p50/p99 of an indexed lookup (after the restart's first lookups, timed apart). The lmdb engine gets STORAGE_SCALE_EVENTS (5,000,000); the in-memory
 * engine the largest count that fits in half of this machine's available memory (capped at the
 * same), as it would otherwise be killed for want of memory.
 *
 *   npm run bench:storage                               # 5 million
 *   STORAGE_SCALE_EVENTS=1000000 npm run bench:storage  # quicker
 *   STORAGE_SCALE_ENGINES=lmdb npm run bench:storage    # lmdb only
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statfsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PerformanceObserver } from 'node:perf_hooks'
import { type Collection, type Db, type Document, MongoClient } from 'mongodb'
import { LATENCY_BUCKETS } from '../../core/storage/embedded/commands/latency.ts'
import { WireClient } from './wire-client.ts'
import { cpuMs, pageFaults, rssAnon, startEmbeddedChild } from './embedded-child.ts'
import { EVENT_INDEXES, EVENTS_PROJECT, eventDocument, uuidOf } from './event-documents.ts'

const EVENTS = Number(process.env.STORAGE_SCALE_EVENTS ?? 5_000_000)
const ENGINES = (process.env.STORAGE_SCALE_ENGINES ?? 'lmdb,memory').split(',')
/** What the in-memory engine needed per stored event (RssAnon, measured on 200,000). */
const MEMORY_ENGINE_BYTES_PER_EVENT = 5.4 * 1024
/** Data folder bytes per event to expect before checking free disk (lmdb, 3 indexes). */
const DISK_BYTES_PER_EVENT = 4096
const MB = 1024 * 1024

interface Figures {
  engine: string
  events: number
  insertPerSecond: number
  rssIdle: number
  rssLoaded: number
  folderBytes: number
  restartMs: number
  /** The server's CPU time until that query answered: what the restart cost, whatever the load. */
  restartCpuMs: number
  /** p99 of the first FIRST_LOOKUPS lookups after the restart. */
  firstLookupsP99: number
  lookupP50: number
  lookupP99: number
  /** The server's own time for the steady lookups (serverStatus opLatencies.reads, see serverReads). */
  server: ServerReads
  /** The steady lookups that took over 1 ms, and those of them during a GC pause of this (client) process. */
  slowLookups: number
  slowDuringClientGc: number
  clientGc: { pauses: number; totalMs: number; longestMs: number }
  /** The server's page faults during the steady lookups: major ones read the mapped file from the disk. */
  serverFaults: { minor: number; major: number }
  /** p50/p99 of as many pings right after: the round trip with no store work, what the lookups cannot go below. */
  pingP50: number
  pingP99: number
  /** p50/p99 of as many lookups sent by a minimal client (wire-client.ts): the server and the socket without the driver. */
  bareP50: number
  bareP99: number
}

/** A histogram of MongoDB's opLatencies: bucket lower bound (µs) → count. */
type Histogram = Map<number, number>

interface ServerReads {
  ops: number
  meanMicros: number
  /** The histogram buckets holding the 50th and 99th percentile lookups: [lower, next lower bound) in µs. */
  p50: [number, number]
  p99: [number, number]
}

const FIRST_LOOKUPS = 200
const STEADY_LOOKUPS = 5000

/** Start (performance.now()) and duration (ms) of each of `count` lookups of random events by the indexed uuid, one at a time. */
async function timeLookups(coll: Collection, events: number, count: number): Promise<Array<[number, number]>> {
  const spans: Array<[number, number]> = []
  for (let i = 0; i < count; i++) {
    const n = Math.floor(Math.random() * events)
    const t = performance.now()
    const doc = await coll.findOne({ project_id: EVENTS_PROJECT, uuid: uuidOf(n) })
    spans.push([t, performance.now() - t])
    if (doc?.uuid !== uuidOf(n)) throw new Error(`event ${n} not found`)
  }
  return spans
}

/** Sorted round trips (ms) of `count` pings: the driver, the socket and both processes' scheduling, no store. */
async function timePings(admin: Db, count: number): Promise<number[]> {
  const latencies: number[] = []
  for (let i = 0; i < count; i++) {
    const t = performance.now()
    await admin.command({ ping: 1 })
    latencies.push(performance.now() - t)
  }
  return latencies.sort((a, b) => a - b)
}

/** Sorted round trips (ms) of `count` lookups like timeLookups's, sent by a minimal client instead of the driver. */
async function timeBareLookups(url: string, events: number, count: number): Promise<number[]> {
  const client = await WireClient.connect(url)
  try {
    const lookups = Array.from({ length: count }, () => {
      const uuid = uuidOf(Math.floor(Math.random() * events))
      const body = { find: 'events', filter: { project_id: EVENTS_PROJECT, uuid }, limit: 1, singleBatch: true }
      return { uuid, message: client.message({ ...body, $db: 'hedgerow' }) }
    })
    const latencies: number[] = []
    for (const { uuid, message } of lookups) {
      const t = performance.now()
      const reply = await client.request(message)
      latencies.push(performance.now() - t)
      if (!reply.includes(uuid)) throw new Error(`event ${uuid} not found`)
    }
    return latencies.sort((a, b) => a - b)
  } finally {
    client.close()
  }
}

function sortedDurations(spans: Array<[number, number]>): number[] {
  return spans.map(([, d]) => d).sort((a, b) => a - b)
}

/** The server's read latencies since it started: serverStatus opLatencies.reads with its histogram. */
async function serverReadLatencies(admin: Db): Promise<{ latency: number; ops: number; histogram: Histogram }> {
  const { reads } = (await admin.command({ serverStatus: 1, opLatencies: { histograms: true } })).opLatencies
  const histogram: Histogram = new Map(
    (reads.histogram as Document[]).map((h) => [Number(h.micros), Number(h.count)] as [number, number]),
  )
  return { latency: Number(reads.latency), ops: Number(reads.ops), histogram }
}

/** The reads between two serverStatus readings (only the lookups ran in between): their mean and percentile buckets. */
function serverReads(
  before: Awaited<ReturnType<typeof serverReadLatencies>>,
  after: Awaited<ReturnType<typeof serverReadLatencies>>,
): ServerReads {
  const ops = after.ops - before.ops
  const counts = LATENCY_BUCKETS.map((bound) => (after.histogram.get(bound) ?? 0) - (before.histogram.get(bound) ?? 0))
  const bucketAt = (p: number): [number, number] => {
    let seen = 0
    for (let b = 0; b < counts.length; b++) {
      seen += counts[b]
      if (seen > Math.floor(ops * p)) return [LATENCY_BUCKETS[b], LATENCY_BUCKETS[b + 1] ?? Number.POSITIVE_INFINITY]
    }
    return [Number.NaN, Number.NaN]
  }
  return { ops, meanMicros: (after.latency - before.latency) / ops, p50: bucketAt(0.5), p99: bucketAt(0.99) }
}

/** GC pauses of this process (start, duration ms) while `run` runs, as the 'gc' performance entries give them. */
async function withGcPauses<T>(run: () => Promise<T>): Promise<{ result: T; pauses: Array<[number, number]> }> {
  const pauses: Array<[number, number]> = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push([entry.startTime, entry.duration])
  })
  observer.observe({ entryTypes: ['gc'] })
  try {
    const result = await run()
    // entries reach the observer on a later tick
    await new Promise((resolve) => setTimeout(resolve, 50))
    return { result, pauses }
  } finally {
    observer.disconnect()
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

function folderBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0])
}

function memAvailable(): number {
  return Number(/MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) * 1024
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')
}

async function measure(engine: string, events: number): Promise<Figures> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `hedgerow-storage-scale-${engine}-`))
  try {
    let server = await startEmbeddedChild(dataDir, engine)
    let client = await MongoClient.connect(server.url)
    let coll = client.db('hedgerow').collection('events')
    await coll.createIndexes(EVENT_INDEXES)
    await new Promise((r) => setTimeout(r, 1000))
    const rssIdle = rssAnon(server.child.pid!)
    const started = performance.now()
    const batch = 1000
    let lastReport = started
    for (let from = 0; from < events; from += batch * 4) {
      await Promise.all(
        [0, 1, 2, 3].map(async (w) => {
          const at = from + w * batch
          if (at >= events) return
          await coll.insertMany(
            Array.from({ length: Math.min(batch, events - at) }, (_, k) => eventDocument(at + k)),
            { ordered: false },
          )
        }),
      )
      if (performance.now() - lastReport > 30_000) {
        lastReport = performance.now()
        console.error(
          `  ${engine}: ${Math.min(events, from + batch * 4).toLocaleString('en')} events, RssAnon ${(rssAnon(server.child.pid!) / MB).toFixed(0)} MB`,
        )
      }
    }
    const insertPerSecond = events / ((performance.now() - started) / 1000)
    const rssLoaded = rssAnon(server.child.pid!)
    await client.close()
    await server.stop()
    const bytes = folderBytes(dataDir)

    const restartStarted = performance.now()
    server = await startEmbeddedChild(dataDir, engine)
    client = await MongoClient.connect(server.url)
    coll = client.db('hedgerow').collection('events')
    await coll.findOne({ project_id: EVENTS_PROJECT, uuid: uuidOf(0) })
    const restartMs = performance.now() - restartStarted
    const restartCpuMs = cpuMs(server.child.pid!)
    // The first lookups after a restart also pay for compiling the server's query path and for
    // faulting in index pages: timed apart from the steady state, which is what a running service sees.
    const firstLookups = sortedDurations(await timeLookups(coll, events, FIRST_LOOKUPS))
    const admin = client.db('admin')
    const serverBefore = await serverReadLatencies(admin)
    const faultsBefore = pageFaults(server.child.pid!)
    const { result: spans, pauses } = await withGcPauses(() => timeLookups(coll, events, STEADY_LOOKUPS))
    const faultsAfter = pageFaults(server.child.pid!)
    const serverAfter = await serverReadLatencies(admin)
    const latencies = sortedDurations(spans)
    const slow = spans.filter(([, d]) => d > 1)
    const duringGc = slow.filter(([t, d]) => pauses.some(([gs, gd]) => gs < t + d && gs + gd > t))
    const pings = await timePings(admin, STEADY_LOOKUPS)
    const bare = await timeBareLookups(server.url, events, STEADY_LOOKUPS)
    await client.close()
    await server.stop()
    return {
      engine,
      events,
      insertPerSecond,
      rssIdle,
      rssLoaded,
      folderBytes: bytes,
      restartMs,
      restartCpuMs,
      firstLookupsP99: percentile(firstLookups, 0.99),
      lookupP50: percentile(latencies, 0.5),
      lookupP99: percentile(latencies, 0.99),
      server: serverReads(serverBefore, serverAfter),
      slowLookups: slow.length,
      slowDuringClientGc: duringGc.length,
      clientGc: {
        pauses: pauses.length,
        totalMs: pauses.reduce((sum, [, d]) => sum + d, 0),
        longestMs: Math.max(0, ...pauses.map(([, d]) => d)),
      },
      serverFaults: { minor: faultsAfter.minor - faultsBefore.minor, major: faultsAfter.major - faultsBefore.major },
      pingP50: percentile(pings, 0.5),
      pingP99: percentile(pings, 0.99),
      bareP50: percentile(bare, 0.5),
      bareP99: percentile(bare, 0.99),
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

function line(f: Figures): string {
  return [
    f.engine.padEnd(7),
    f.events.toLocaleString('en').padStart(10),
    `${f.insertPerSecond.toFixed(0)}/s`.padStart(9),
    `${(f.rssIdle / MB).toFixed(0)} → ${(f.rssLoaded / MB).toFixed(0)} MB (+${((f.rssLoaded - f.rssIdle) / MB).toFixed(0)})`.padStart(
      24,
    ),
    `${(f.folderBytes / MB).toFixed(0)} MB, ${(f.folderBytes / f.events).toFixed(0)} B/event`.padStart(24),
    `${(f.restartMs / 1000).toFixed(1)} s (CPU ${(f.restartCpuMs / 1000).toFixed(1)} s)`.padStart(20),
    `${f.lookupP50.toFixed(2)} / ${f.lookupP99.toFixed(2)} ms`.padStart(16),
    `${f.firstLookupsP99.toFixed(2)} ms`.padStart(10),
  ].join('  ')
}

const range = ([low, high]: [number, number]) => `${low}–${high}`

/** The steady lookups seen from both ends: the round trip here, the server's own time, this process's GC. */
function lookupLine(f: Figures): string {
  const gc = f.clientGc
  return [
    f.engine.padEnd(7),
    `${f.lookupP50.toFixed(2)} / ${f.lookupP99.toFixed(2)} ms`.padStart(16),
    `${f.pingP50.toFixed(2)} / ${f.pingP99.toFixed(2)} ms`.padStart(16),
    `${f.bareP50.toFixed(2)} / ${f.bareP99.toFixed(2)} ms`.padStart(16),
    `${range(f.server.p50)} / ${range(f.server.p99)} µs`.padStart(24),
    `${f.server.meanMicros.toFixed(0)} µs`.padStart(9),
    `${f.slowLookups} (${f.slowDuringClientGc} in client GC)`.padStart(22),
    `${gc.pauses}, ${gc.totalMs.toFixed(0)} ms, longest ${gc.longestMs.toFixed(1)} ms`.padStart(30),
    `${f.serverFaults.minor} / ${f.serverFaults.major}`.padStart(16),
  ].join('  ')
}

async function main(): Promise<void> {
  const disk = statfsSync(os.tmpdir())
  const free = disk.bavail * disk.bsize
  const needed = EVENTS * DISK_BYTES_PER_EVENT
  console.log(
    `storage_scale: ${EVENTS.toLocaleString('en')} events, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB memory, ${(free / 2 ** 30).toFixed(0)} GiB free in ${os.tmpdir()} (about ${(needed / 2 ** 30).toFixed(0)} GiB needed), load average ${loadAverage()}`,
  )
  if (free < needed * 1.2) throw new Error('not enough free disk for this count: set STORAGE_SCALE_EVENTS lower')
  const memoryEvents = Math.min(
    EVENTS,
    Math.floor(memAvailable() / 2 / MEMORY_ENGINE_BYTES_PER_EVENT / 100_000) * 100_000,
  )
  const results: Figures[] = []
  if (ENGINES.includes('lmdb')) results.push(await measure('lmdb', EVENTS))
  if (ENGINES.includes('memory') && memoryEvents > 0) results.push(await measure('memory', memoryEvents))
  console.log(
    `engine       events    insert      RssAnon idle → loaded        data folder               restart   lookup p50 / p99   first ${FIRST_LOOKUPS} p99`,
  )
  for (const f of results) console.log(line(f))
  console.log(
    `\n${STEADY_LOOKUPS} steady lookups: round trip (driver) beside a ping's (no store work), the same lookups from a minimal client (no driver), the server's own time (serverStatus opLatencies.reads: histogram buckets, mean), this client's GC pauses and the server's page faults during the lookups (major: read from the disk)\nengine   round trip p50 / p99  ping p50 / p99  no driver p50/p99  server p50 / p99 bucket  server mean  lookups over 1 ms   client GC: pauses, total, longest  faults minor / major`,
  )
  for (const f of results) console.log(lookupLine(f))
  console.log(
    `load average at the end: ${loadAverage()} (other jobs stretch insert, restart and lookup times, not RssAnon or bytes)`,
  )
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
