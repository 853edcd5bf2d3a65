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
import { type Collection, MongoClient } from 'mongodb'
import { cpuMs, rssAnon, startEmbeddedChild } from './embedded-child.ts'
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
}

const FIRST_LOOKUPS = 200
const STEADY_LOOKUPS = 5000

/** Sorted latencies (ms) of `count` lookups of random events by the indexed uuid, one at a time. */
async function timeLookups(coll: Collection, events: number, count: number): Promise<number[]> {
  const latencies: number[] = []
  for (let i = 0; i < count; i++) {
    const n = Math.floor(Math.random() * events)
    const t = performance.now()
    const doc = await coll.findOne({ project_id: EVENTS_PROJECT, uuid: uuidOf(n) })
    latencies.push(performance.now() - t)
    if (doc?.uuid !== uuidOf(n)) throw new Error(`event ${n} not found`)
  }
  return latencies.sort((a, b) => a - b)
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
    const firstLookups = await timeLookups(coll, events, FIRST_LOOKUPS)
    const latencies = await timeLookups(coll, events, STEADY_LOOKUPS)
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
    `load average at the end: ${loadAverage()} (other jobs stretch insert, restart and lookup times, not RssAnon or bytes)`,
  )
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
