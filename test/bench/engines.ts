/**
 * `npx tsx test/bench/engines.ts`: the embedded store's two engines side by side in one run, each
 * with its own database process and service, driven in alternating slices (load.ts) so that the
 * shared machine's drift falls on both: capture batches without and with persons, and flags
 * (2,000 stored persons, 32 connections). Prints, per figure and engine, the rate, the latency
 * the service's and the database's CPU per unit, and how many cores the three processes kept busy
 * (below 2 on this machine: the rate is bounded by a serial step, not by the cores).
 * BENCH_SECONDS, BENCH_SLICES as for `npm run bench`;
 * BENCH_ENGINES (default memory,lmdb): an entry may add environment for its database process,
 * `lmdb:NAME=value:OTHER=value`, to compare two settings of one engine in the same run, and may
 * name another checkout to run that side's database and service from, `memory@/path/to/checkout`,
 * to compare two versions of the project in one run (a checkout from before the compiled launcher
 * runs its sources through tsx).
 * BENCH_CPU_PROF_DIR: the database processes write `--cpu-prof` profiles there.
 * BENCH_FIGURES (default personless,persons,flags): which figures to measure.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { httpTarget, interleave, type LoadResult, type Target } from './load.ts'
import { BATCH_SIZE, batchBodies, benchUsers, flagDefinitions, flagsBodies, USER_COUNT } from './payloads.ts'
import { storeFlagsPersons } from './flags.ts'
import { admin, BENCH_ADMIN_KEY, startMongo, startService, type Child } from './processes.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const SLICES = Number(process.env.BENCH_SLICES ?? 4)
const ENGINES = (process.env.BENCH_ENGINES ?? 'memory,lmdb').split(',')
const FIGURES = new Set((process.env.BENCH_FIGURES ?? 'personless,persons,flags').split(','))
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR
const ADMIN_KEY = BENCH_ADMIN_KEY

interface Side {
  engine: string
  service: Child
  mongo: Child
  token: string
}

/** `lmdb:NAME=value:…`: the engine and the extra environment of its database process. */
function sideEnvironment(entry: string): Record<string, string> {
  const [side, ...settings] = entry.split(':')
  const env: Record<string, string> = { EMBEDDED_MONGO_ENGINE: side!.split('@')[0]! }
  for (const setting of settings) {
    const equals = setting.indexOf('=')
    env[setting.slice(0, equals)] = setting.slice(equals + 1)
  }
  return env
}

/** `memory@/path/to/checkout:…`: run this side's database and service from another source tree. */
function sourceTree(entry: string): string | undefined {
  return entry.split(':')[0]!.split('@')[1]
}

async function startSide(dir: string, engine: string, children: Child[]): Promise<Side> {
  const folder = path.join(dir, engine.replace(/[^\w.-]+/g, '_'))
  const root = sourceTree(engine)
  const mongo = await startMongo(path.join(folder, 'mongo'), CPU_PROF_DIR, sideEnvironment(engine), root)
  children.push(mongo)
  const service = await startService({
    mongodbUrl: mongo.url,
    database: 'bench',
    dataDir: path.join(folder, 'service'),
    adminKey: ADMIN_KEY,
    workers: 1,
    logLevel: 'info',
    root,
  })
  children.push(service)
  const project = await admin(service, 'POST', '/api/projects', { name: 'bench' })
  await admin(service, 'PUT', `/api/projects/${project.id}/flag_definitions`, flagDefinitions())
  return { engine, service, mongo, token: String(project.api_token) }
}

function target(side: Side, p: string, bodies: readonly string[], connections: number): Target {
  return httpTarget({
    url: side.service.url,
    path: p,
    bodies,
    connections,
    pid: side.service.process.pid!,
    databasePid: side.mongo.process.pid!,
    warmUpSeconds: 2,
  })
}

function print(figure: string, sides: Side[], results: LoadResult[], perRequest: number, unit: string): void {
  results.forEach((r, i) => {
    const units = r.requests * perRequest
    console.log(
      `${figure} ${sides[i].engine}: ${Math.round(r.rps * perRequest)} ${unit}/s, p50 ${r.p50} ms, p99 ${r.p99} ms, service ${((r.targetCpuSeconds * 1e6) / units).toFixed(0)} µs, database ${((r.databaseCpuSeconds * 1e6) / units).toFixed(0)} µs per ${unit.replace(/s$/, '')}, busy ${((r.targetCpuSeconds + r.databaseCpuSeconds) / (r.requests / r.rps) + r.generatorCpu).toFixed(2)} cores`,
    )
  })
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-engines-'))
  const children: Child[] = []
  const sides: Side[] = []
  try {
    for (const engine of ENGINES) sides.push(await startSide(dir, engine, children))
    const measure = (targets: Target[]) => interleave(targets, SECONDS, SLICES)
    if (FIGURES.has('personless')) {
      const personless = await measure(sides.map((s) => target(s, '/batch/', batchBodies(s.token, 200, false), 8)))
      print('capture_batch_personless', sides, personless, BATCH_SIZE, 'events')
    }
    if (FIGURES.has('persons')) {
      const persons = await measure(sides.map((s) => target(s, '/batch/', batchBodies(s.token, 200, true), 8)))
      print('capture_batch_persons', sides, persons, BATCH_SIZE, 'events')
    }
    if (!FIGURES.has('flags')) return
    const users = benchUsers(USER_COUNT).slice(0, 2000)
    for (const s of sides) await storeFlagsPersons(s.service.url, s.token, users)
    const flags = await measure(sides.map((s) => target(s, '/flags/?v=2', flagsBodies(s.token, users), 32)))
    print('flags_latency', sides, flags, 1, 'requests')
  } finally {
    for (const child of children.reverse()) await child.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
