/**
 * `npx tsx test/bench/engine-writes.ts`: the embedded database's CPU per stored event on the
 * service's write pattern, without the service (whose CPU would dwarf and blur the database's on a
 * shared machine): unordered insertMany of 100 event documents with w: 'majority', j: true into the
 * events collection and its indexes (random uuid and distinct_id, ordered timestamp), from 8
 * clients at once, and then the same with one unordered bulkWrite of person upserts beside each.
 *
 * BENCH_ENGINES as for engines.ts (`lmdb:NAME=value` adds environment to that side's database;
 * `lmdb@/path/to/checkout` runs that side's database from another checkout of the project),
 * BENCH_ROUNDS (default 6) rounds, each side in turn (the order alternating) for BENCH_ROUND_SECONDS
 * (default 3): the machine's drift falls on every side. Prints, per side, the median and the range
 * of the rounds' CPU µs per event and events per second. BENCH_CPU_PROF_DIR: the database processes
 * write `--cpu-prof` profiles there. BENCH_PHASES (default events,persons): which of the two to run.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient, ObjectId, type Collection, type Document } from 'mongodb'
import { seeded, USER_COUNT } from './payloads.ts'
import { cpuSeconds, startMongo, type Child } from './processes.ts'

const ENGINES = (process.env.BENCH_ENGINES ?? 'memory,lmdb').split(',')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 3)
const CLIENTS = 8
const BATCH = 100
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR
const PHASES = new Set((process.env.BENCH_PHASES ?? 'events,persons').split(','))
const WRITE = { writeConcern: { w: 'majority' as const, j: true }, ordered: false }

interface Side {
  name: string
  mongo: Child
  client: MongoClient
  events: Collection<Document>
  persons: Collection<Document>
}

function sideEnvironment(entry: string): Record<string, string> {
  const [side, ...settings] = entry.split(':')
  const env: Record<string, string> = { EMBEDDED_MONGO_ENGINE: side.split('@')[0] }
  for (const setting of settings) {
    const equals = setting.indexOf('=')
    env[setting.slice(0, equals)] = setting.slice(equals + 1)
  }
  return env
}

const random = seeded(7)
let sequence = 0

function eventDocument(personful: boolean): Document {
  const user = Math.floor(random() * USER_COUNT)
  const i = sequence++
  return {
    project_id: 1,
    uuid: new ObjectId().toHexString() + Math.floor(random() * 0xffffffff).toString(16),
    event: '$pageview',
    distinct_id: `${personful ? 'user' : 'anon'}-${user}`,
    properties: {
      $current_url: `https://example.com/page/${i % 40}`,
      $browser: 'Chrome',
      $browser_version: 130,
      $os: 'Mac OS X',
      $lib: 'web',
      $lib_version: '1.200.0',
      $ip: '203.0.113.7',
      $session_id: `session-${user}`,
      $screen_width: 1920,
      $screen_height: 1080,
      $referrer: 'https://www.google.com/',
      $geoip_country_code: 'DE',
      $geoip_city_name: 'Berlin',
    },
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 10),
    created_at: new Date(),
    person_mode: personful ? 'full' : 'propertyless',
    ...(personful ? { person_id: `person-${user}`, person_properties: { email: `user${user}@example.com` } } : {}),
  }
}

async function startSide(dir: string, name: string): Promise<Side> {
  const root = name.split(':')[0].split('@')[1]
  const mongo = await startMongo(
    path.join(dir, name.replace(/[^\w.-]+/g, '_')),
    CPU_PROF_DIR,
    sideEnvironment(name),
    root,
  )
  const client = await MongoClient.connect(mongo.url, { maxPoolSize: CLIENTS * 2 })
  const db = client.db('bench')
  const events = db.collection('events')
  await events.createIndexes([
    { key: { project_id: 1, uuid: 1 }, name: 'project_uuid_unique', unique: true },
    { key: { project_id: 1, timestamp: -1, uuid: -1 }, name: 'project_timestamp' },
    { key: { project_id: 1, distinct_id: 1, timestamp: -1 }, name: 'project_distinct_id_timestamp' },
  ])
  const persons = db.collection('persons')
  await persons.createIndex({ project_id: 1, distinct_id: 1 }, { unique: true })
  return { name, mongo, client, events, persons }
}

/** One client's loop for `seconds`: a batch insert (and its person upserts) after another. */
async function writer(side: Side, personful: boolean, until: number): Promise<number> {
  let stored = 0
  while (performance.now() < until) {
    const docs = Array.from({ length: BATCH }, () => eventDocument(personful))
    const upserts = personful
      ? [...new Set(docs.map((d) => d.distinct_id as string))].map((distinct_id) => ({
          updateOne: {
            filter: { project_id: 1, distinct_id },
            update: { $set: { last_seen: new Date() }, $setOnInsert: { created_at: new Date() } },
            upsert: true,
          },
        }))
      : []
    await Promise.all([
      side.events.insertMany(docs, WRITE),
      upserts.length ? side.persons.bulkWrite(upserts, WRITE) : undefined,
    ])
    stored += BATCH
  }
  return stored
}

/** Bytes the process has handed to write(2)/pwrite(2) (wchar) and caused to reach the disk (write_bytes). */
function written(pid: number): { wchar: number; disk: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8')
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(io)?.[1] ?? 0)
  return { wchar: field('wchar'), disk: field('write_bytes') }
}

interface Round {
  cpu: number
  events: number
  seconds: number
  wchar: number
  disk: number
}

async function round(side: Side, personful: boolean): Promise<Round> {
  const pid = side.mongo.process.pid!
  const start = performance.now()
  const before = cpuSeconds(pid)
  const io = written(pid)
  const until = start + ROUND_SECONDS * 1000
  const counts = await Promise.all(Array.from({ length: CLIENTS }, () => writer(side, personful, until)))
  const after = written(pid)
  return {
    cpu: cpuSeconds(pid) - before,
    events: counts.reduce((a, b) => a + b, 0),
    seconds: (performance.now() - start) / 1000,
    wchar: after.wchar - io.wchar,
    disk: after.disk - io.disk,
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function measure(sides: Side[], personful: boolean, label: string): Promise<void> {
  for (const side of sides) await round(side, personful) // warm-up
  const perEvent = new Map<string, number[]>(sides.map((s) => [s.name, []]))
  const rates = new Map<string, number[]>(sides.map((s) => [s.name, []]))
  const bytes = new Map<string, Array<{ wchar: number; disk: number }>>(sides.map((s) => [s.name, []]))
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...sides].reverse() : sides
    for (const side of order) {
      const { cpu, events, seconds, wchar, disk } = await round(side, personful)
      perEvent.get(side.name)!.push((cpu * 1e6) / events)
      bytes.get(side.name)!.push({ wchar: wchar / events, disk: disk / events })
      rates.get(side.name)!.push(events / seconds)
    }
  }
  for (const side of sides) {
    const us = perEvent.get(side.name)!
    const kib = (pick: (b: { wchar: number; disk: number }) => number) =>
      (median(bytes.get(side.name)!.map(pick)) / 1024).toFixed(1)
    console.log(
      `${label} ${side.name}: database ${median(us).toFixed(0)} µs per event (rounds ${Math.min(...us).toFixed(0)}–${Math.max(...us).toFixed(0)}), ${median(rates.get(side.name)!).toFixed(0)} events/s, written ${kib((b) => b.wchar)} KiB per event (${kib((b) => b.disk)} KiB to the disk)`,
    )
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-engine-writes-'))
  const sides: Side[] = []
  try {
    for (const name of ENGINES) sides.push(await startSide(dir, name))
    if (PHASES.has('events')) await measure(sides, false, 'events')
    if (PHASES.has('persons')) await measure(sides, true, 'events+persons')
  } finally {
    for (const side of sides) {
      await side.client.close()
      await side.mongo.stop()
    }
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
