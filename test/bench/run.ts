/**
 * `npm run bench`: starts the embedded database, the service (`core/main.ts` with the default
 * config) and the bare node:http baselines on loopback, drives them with autocannon, and prints
 * `bench <name> <value> <unit> ratio <r> vs <baseline>` per figure, then a table. Every ratio
 * compares two measurements of this run, on the same database, with the same payloads, taken in
 * alternating slices (load.ts) so that the machine's drift falls on both sides. `flags_ceiling` is
 * the flags work alone in bare node:http (ceiling.ts, evaluating as the service does), `flags_latency`'s baseline, itself compared
 * with a bare JSON echo; `flags_at_rate` is open loop (evenly spaced requests at a fixed rate, as page loads arrive, each
 * timed from its scheduled send: open-loop.ts);
 * beside figure 2, `capture_batch_one_person`: batches of one user each, the shape posthog-js sends.
 *
 * Environment: BENCH_SECONDS (per measurement, default 8), BENCH_SLICES (slices per measurement,
 * default 4), BENCH_LOG_LEVEL (the service's, default info as shipped), BENCH_CPU_PROF=<dir> (write
 * the service's --cpu-prof profiles there), BENCH_SERVICE_NODE_ARGS (node options for the service's
 * processes, space-separated: V8's GC settings, say), BENCH_ONLY=<comma-separated figure names>,
 * BENCH_FLAGS_RATE (flags_at_rate's requests per second, default 2000), BENCH_MONGO_STANDALONE=1 (the
 * database standalone instead of the one-member replica set the service starts for itself). `persons_search` times the
 * admin API's person search among 100,000 persons against a `?distinct_id=` lookup (persons-search.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import { httpTarget, interleave } from './load.ts'
import type { LoadResult, Target } from './load.ts'
import { insertManyTarget } from './insert-many.ts'
import { openLoopTarget } from './open-loop.ts'
import { evaluatorFigure } from './evaluator.ts'
import { PERSONS, insertBenchPersons, personsSearchFigure } from './persons-search.ts'
import { assertSameFlagValues, sdkDefinitions, storeFlagsPersons } from './flags.ts'
import {
  BATCH_SIZE,
  batchBodies,
  benchUsers,
  flagDefinitions,
  flagsBodies,
  onePersonBatchBodies,
  singleBodies,
  USER_COUNT,
} from './payloads.ts'
import { admin, BENCH_ADMIN_KEY, startBaselines, startMongo, startService, treeRssMiB } from './processes.ts'
import { printTable, report, round } from './table.ts'
import type { Child, ServiceSettings } from './processes.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
/** Each target's measurement comes in this many slices, alternating with the other targets' of its figure. */
const SLICES = Number(process.env.BENCH_SLICES ?? 4)
const ONLY = process.env.BENCH_ONLY?.split(',')
const ADMIN_KEY = BENCH_ADMIN_KEY
const wanted = (name: string) => !ONLY || ONLY.includes(name)
const FLAGS_FIGURES = ['flags_latency', 'flags_ceiling', 'workers_scaling', 'flags_at_rate']
/** Figure `flags_at_rate`'s open-loop request rate. */
const FLAGS_RATE = Number(process.env.BENCH_FLAGS_RATE ?? 2000)

/**
 * CPU per event (or request) of the serving process and of the database, stabler on a shared
 * machine than the rates, and the database commands each request cost: `find 0.31, insert 1.02`.
 */
function cpuPerUnit(result: LoadResult, eventsPerRequest: number, unit = 'event'): string {
  const events = result.requests * eventsPerRequest
  const commands = [...result.commandsPerRequest].filter(([, n]) => n >= 0.005).sort((a, b) => b[1] - a[1])
  const perRequest = commands.length
    ? `; database commands per request: ${commands.map(([name, n]) => `${name} ${n.toFixed(2)}`).join(', ')}`
    : ''
  return `service ${((result.targetCpuSeconds * 1e6) / events).toFixed(0)} µs, database ${((result.databaseCpuSeconds * 1e6) / events).toFixed(0)} µs per ${unit}${perRequest}`
}

/** Commands run so far by name: the embedded server's serverStatus counters (a real server's count too). */
async function commandTotals(db: Db): Promise<Map<string, number>> {
  const status = (await db.admin().command({ serverStatus: 1 })) as {
    metrics?: { commands?: Record<string, { total: unknown }> }
  }
  return new Map(Object.entries(status.metrics?.commands ?? {}).map(([name, { total }]) => [name, Number(total)]))
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-bench-'))
  const started = performance.now()
  const children: Child[] = []
  try {
    const mongo = await startMongo(path.join(dir, 'mongo'), process.env.BENCH_CPU_PROF)
    children.push(mongo)
    const settings: ServiceSettings = {
      mongodbUrl: mongo.url,
      database: 'bench',
      dataDir: path.join(dir, 'service'),
      adminKey: ADMIN_KEY,
      workers: 1,
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
      cpuProfDir: process.env.BENCH_CPU_PROF,
      nodeArgs: process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean),
    }
    const service = await startService(settings)
    children.push(service)
    const baselines = await startBaselines(mongo.url, 'bench')
    children.push(baselines)
    const project = await admin(service, 'POST', '/api/projects', { name: 'bench' })
    const token = String(project.api_token)
    await admin(service, 'PUT', `/api/projects/${project.id}/flag_definitions`, flagDefinitions())
    const pid = service.process.pid!
    // before any load: the service started, with a project and its definitions
    const idleRssMiB = treeRssMiB(pid)
    const client = new MongoClient(mongo.url)
    await client.connect()
    const db = client.db('bench')
    const databasePid = mongo.process.pid!
    const commands = () => commandTotals(db)
    const http = (
      url: string,
      p: string,
      bodies: readonly string[],
      connections: number,
      target = pid,
      warmUpSeconds = 2,
    ): Target =>
      httpTarget({
        url,
        path: p,
        bodies,
        connections,
        pid: target,
        databasePid,
        warmUpSeconds,
        databaseCommands: commands,
      })
    const measure = (targets: Target[]) => interleave(targets, SECONDS, SLICES)

    if (wanted('capture_batch_personless') || wanted('capture_batch_persons')) {
      const personless = batchBodies(token, 200, false)
      // one batch stored before the load, so the baseline has the service's documents to copy
      const seed = await fetch(`${service.url}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: personless[0],
      })
      if (seed.status !== 200) throw new Error(`POST /batch/ answered ${seed.status}: ${await seed.text()}`)
      const baselineTarget = await insertManyTarget(db, {
        concurrency: 8,
        batchSize: BATCH_SIZE,
        databasePid,
        databaseCommands: commands,
      })
      const [service1, baseline] = await measure([http(service.url, '/batch/', personless, 8), baselineTarget])
      const rawInsertMany = baseline!.rps
      const baselineName = `mongodb_insertMany(${round(rawInsertMany)} events/s)`
      if (wanted('capture_batch_personless')) {
        const eps = service1!.rps * BATCH_SIZE
        const costs = `${cpuPerUnit(service1!, BATCH_SIZE)}; baseline: database ${((baseline!.databaseCpuSeconds * 1e6) / baseline!.requests).toFixed(0)} µs, driver ${((baseline!.targetCpuSeconds * 1e6) / baseline!.requests).toFixed(0)} µs per event`
        report({
          name: 'capture_batch_personless',
          value: eps,
          unit: 'events/s',
          ratio: eps / rawInsertMany,
          baseline: baselineName,
          target: '≥ 0.8',
          met: eps / rawInsertMany >= 0.8,
          peakRssMiB: service1!.peakRssMiB,
          idleRssMiB,
          note: costs,
        })
      }
      if (wanted('capture_batch_persons')) {
        // after figure 1, whose events are personless: its $identify events merge figure 1's anonymous ids,
        // so the two alternating would measure a mix; the baseline alternates again, beside this figure
        const onePerson = http(service.url, '/batch/', onePersonBatchBodies(token, 200), 8)
        const [persons, again, browser] = await measure([
          http(service.url, '/batch/', batchBodies(token, 200, true), 8),
          baselineTarget,
          onePerson,
        ])
        const eps = persons!.rps * BATCH_SIZE
        const ratio = eps / again!.rps
        const baseline = `mongodb_insertMany(${round(again!.rps)} events/s)`
        report({
          name: 'capture_batch_persons',
          value: eps,
          unit: 'events/s',
          ratio,
          baseline,
          target: '≥ 0.4',
          met: ratio >= 0.4,
          peakRssMiB: persons!.peakRssMiB,
          idleRssMiB,
          note: `${USER_COUNT} users, 1/3 $identify with $set; ${cpuPerUnit(persons!, BATCH_SIZE)}`,
        })
        const browserEps = browser!.rps * BATCH_SIZE
        const browserNote = `each batch 100 pageviews of one of ${USER_COUNT} users with $set_once, as posthog-js sends them; ${cpuPerUnit(browser!, BATCH_SIZE)}`
        report({
          name: 'capture_batch_one_person',
          value: browserEps,
          unit: 'events/s',
          ratio: browserEps / again!.rps,
          baseline,
          target: '-',
          met: false,
          reference: true,
          peakRssMiB: browser!.peakRssMiB,
          note: browserNote,
        })
      }
    }
    if (wanted('capture_single')) {
      const bodies = singleBodies(token, 1000)
      const [ours, bare] = await measure([
        http(service.url, '/i/v0/e/', bodies, 32),
        http(baselines.url, '/i/v0/e/', bodies, 32, baselines.process.pid!),
      ])
      const costs = `${cpuPerUnit(ours!, 1)}; baseline: ${cpuPerUnit(bare!, 1)}`
      report({
        name: 'capture_single',
        value: ours!.rps,
        unit: 'req/s',
        ratio: ours!.rps / bare!.rps,
        baseline: `node_http_insertOne(${round(bare!.rps)} req/s)`,
        target: '≥ 0.7',
        met: ours!.rps / bare!.rps >= 0.7,
        peakRssMiB: ours!.peakRssMiB,
        idleRssMiB,
        note: costs,
      })
    }
    const users = benchUsers(USER_COUNT)
    if (FLAGS_FIGURES.some(wanted)) {
      await storeFlagsPersons(service.url, token, users.slice(0, 2000))
      const bodies = flagsBodies(token, users.slice(0, 2000))
      await admin(
        baselines,
        'PUT',
        '/ceiling/definitions',
        await sdkDefinitions(service.url, token, String(project.secret_api_token)),
      )
      await assertSameFlagValues(`${service.url}/flags/?v=2`, `${baselines.url}/ceiling/flags`, bodies.slice(0, 20))
      await assertSameFlagValues(
        `${baselines.url}/ceiling/flags`,
        `${baselines.url}/ceiling/flags-interpreted`,
        bodies.slice(0, 20),
      )
      const baselinePid = baselines.process.pid!
      const echoName = (rps: number) => `node_http_json_echo(${round(rps)} req/s)`
      if (wanted('flags_latency') || wanted('flags_ceiling') || wanted('workers_scaling')) {
        const targets = [
          http(service.url, '/flags/?v=2', bodies, 32),
          http(baselines.url, '/echo', bodies, 32, baselinePid),
          http(baselines.url, '/ceiling/flags', bodies, 32, baselinePid),
          http(baselines.url, '/ceiling/flags-interpreted', bodies, 32, baselinePid),
        ]
        if (wanted('workers_scaling')) {
          // both services run side by side on the same database, so that their slices can alternate
          const two = await startService({ ...settings, dataDir: `${settings.dataDir}-2`, workers: 2 })
          children.push(two)
          // twice the warm-up: each of the two fresh workers gets about the warm-up requests the single one got
          targets.push(http(two.url, '/flags/?v=2', bodies, 32, two.process.pid!, 4))
        }
        const [flags1, echo, ceiling, interpreted, flags2] = await measure(targets)
        const ratio = flags1!.rps / ceiling!.rps
        const latencyNote = `p50 ${flags1!.p50} ms, p99 ${flags1!.p99} ms; ${cpuPerUnit(flags1!, 1, 'request')}`
        report({
          name: 'flags_latency',
          value: flags1!.rps,
          unit: 'req/s',
          ratio,
          baseline: `flags_ceiling(${round(ceiling!.rps)} req/s)`,
          target: 'p99 ≤ 10 ms, ≥ 0.85 of ceiling',
          met: flags1!.p99 <= 10 && ratio >= 0.85,
          peakRssMiB: flags1!.peakRssMiB,
          idleRssMiB,
          note: latencyNote,
        })
        const ceilingRatio = ceiling!.rps / echo!.rps
        const ceilingNote = `the same evaluation (a turn's requests together, as the service) and response JSON in bare node:http, properties from the request: no Koa, no database; p50 ${ceiling!.p50} ms, p99 ${ceiling!.p99} ms; ${cpuPerUnit(ceiling!, 1, 'request')}`
        report({
          name: 'flags_ceiling',
          value: ceiling!.rps,
          unit: 'req/s',
          ratio: ceilingRatio,
          baseline: echoName(echo!.rps),
          target: '≥ 0.3',
          met: ceilingRatio >= 0.3,
          note: ceilingNote,
        })
        const interpretedNote = `flags_ceiling with the reference interpreter instead of the compiled flags; ${cpuPerUnit(interpreted!, 1, 'request')}`
        report({
          name: 'flags_ceiling_interpreted',
          value: interpreted!.rps,
          unit: 'req/s',
          ratio: interpreted!.rps / ceiling!.rps,
          baseline: `flags_ceiling(${round(ceiling!.rps)} req/s)`,
          target: '-',
          met: false,
          reference: true,
          note: interpretedNote,
        })
        if (flags2) {
          const scaling = flags2.rps / flags1!.rps
          const note = `${os.cpus().length <= 2 ? 'no target on 2 cores: the load generator and the database share them; ' : ''}load generator CPU ${(flags2.generatorCpu * 100).toFixed(0)}% of a core with 2 workers, ${(flags1!.generatorCpu * 100).toFixed(0)}% with 1; p99 ${flags2.p99} ms; ${cpuPerUnit(flags2, 1, 'request')}`
          const noTarget = os.cpus().length <= 2 ? 'no target (2 cores)' : undefined
          report({
            name: 'workers_scaling',
            value: flags2.rps,
            unit: 'req/s',
            ratio: scaling,
            baseline: `1_worker(${round(flags1!.rps)} req/s)`,
            target: noTarget ? '-' : '≥ 1.3',
            met: scaling >= 1.3,
            noTarget,
            peakRssMiB: flags2.peakRssMiB,
            note,
          })
        }
      }
      if (wanted('flags_at_rate')) {
        // open loop: a page-load workload sends on its own schedule; the echo at the same rate shows what the machine adds
        const atRate = (url: string, p: string, pid: number) =>
          openLoopTarget({
            url,
            path: p,
            bodies,
            pid,
            databasePid,
            warmUpSeconds: 2,
            databaseCommands: commands,
            rate: FLAGS_RATE,
          })
        const [flags, echo] = await measure([
          atRate(service.url, '/flags/?v=2', pid),
          atRate(baselines.url, '/echo', baselinePid),
        ])
        // the generator's own lag is in the latencies (timed from the schedule): printed so that an overloaded
        // load generator is told apart from a slow service
        const note = `p50 ${flags!.p50} ms, p99 ${flags!.p99} ms at ${FLAGS_RATE} req/s asked, sent p99 ${flags!.sendLagP99} ms behind schedule; echo at the same rate: p50 ${echo!.p50} ms, p99 ${echo!.p99} ms, sent p99 ${echo!.sendLagP99} ms behind; ${cpuPerUnit(flags!, 1, 'request')}`
        report({
          name: 'flags_at_rate',
          value: flags!.p99,
          unit: 'ms p99',
          ratio: flags!.rps / FLAGS_RATE,
          baseline: `${FLAGS_RATE} req/s asked (served share)`,
          target: 'p99 ≤ 5 ms',
          met: flags!.p99 <= 5 && flags!.rps >= FLAGS_RATE * 0.95,
          peakRssMiB: flags!.peakRssMiB,
          idleRssMiB,
          note,
        })
      }
    }
    if (wanted('persons_search')) {
      await insertBenchPersons(db, Number(project.id))
      const figure = await personsSearchFigure(service.url, ADMIN_KEY, Number(project.id), SECONDS)
      const { search, lookup } = figure
      report({
        name: 'persons_search',
        value: search.p99,
        unit: 'ms p99',
        ratio: search.p99 / lookup.p99,
        baseline: `distinct_id_lookup(p99 ${lookup.p99} ms)`,
        target: 'p99 ≤ 100 ms',
        met: search.p99 <= 100,
        note: `admin API ?search= and ?property=&value= among ${PERSONS.toLocaleString('en')} persons, one request at a time alternating with ?distinct_id=; search p50 ${search.p50} ms over ${search.count} requests (${figure.meanResults.toFixed(1)} persons a page), lookup p50 ${lookup.p50} ms`,
      })
    }
    if (wanted('evaluator_vs_posthog_node')) {
      const figure = await evaluatorFigure(service.url, token, String(project.secret_api_token), users)
      for (const line of figure.mismatches.slice(0, 20)) console.log(`mismatch ${line}`)
      const ratio = figure.oursPerSecond / figure.posthogNodePerSecond
      report({
        name: 'evaluator_vs_posthog_node',
        value: figure.oursPerSecond,
        unit: 'users/CPU s',
        ratio,
        baseline: `posthog-node(${round(figure.posthogNodePerSecond)} users/CPU s)`,
        target: '≥ 15, no mismatch',
        met: ratio >= 15 && figure.mismatches.length === 0,
        note: `${figure.flagsPerUser} flags per user, ${figure.mismatches.length} mismatches in ${users.length * figure.flagsPerUser} pairs`,
      })
      if (figure.mismatches.length) process.exitCode = 1
    }
    await client.close()
  } finally {
    for (const child of children.reverse()) await child.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  printTable(performance.now() - started, SECONDS)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exit(1)
})
