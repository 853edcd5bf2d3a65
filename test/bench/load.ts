/**
 * One load run with autocannon (in this process): POST bodies taken in turn from a list, for a
 * fixed time after a short warm-up, with the load generator's own CPU use and the target's peak
 * resident memory measured alongside. Any non-2xx answer or connection error fails the run.
 */
import autocannon from 'autocannon'
import { cpuSeconds, sampleRss } from './processes.ts'

export interface LoadSpec {
  url: string
  path: string
  bodies: readonly string[]
  connections: number
  seconds: number
  /** The process serving the load, for its peak RSS and CPU use. */
  pid: number
  /** The database process, for its CPU use. */
  databasePid?: number
  /** Load before the measurement (default 2 s): JIT, pools, first-sight writes. */
  warmUpSeconds?: number
  /** The database's command counters by name, read around the measurement. */
  databaseCommands?: () => Promise<ReadonlyMap<string, number>>
}

export interface LoadResult {
  rps: number
  p50: number
  p99: number
  /** CPU used by this process (the load generator) as a share of one core, 0..1+. */
  generatorCpu: number
  peakRssMiB: number
  /** Requests answered 2xx during the measurement. */
  requests: number
  /** CPU seconds the target process tree and the database used during the measurement. */
  targetCpuSeconds: number
  databaseCpuSeconds: number
  /** Database commands per request during the measurement, by name (when databaseCommands was given). */
  commandsPerRequest: Map<string, number>
}

async function fire(spec: LoadSpec, seconds: number, warmUp = false) {
  let next = 0
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: seconds,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: spec.path,
        headers: { 'content-type': 'application/json' },
        setupRequest(request) {
          request.body = spec.bodies[next++ % spec.bodies.length]
          return request
        },
      },
    ],
  })
  if (!result['2xx'] && !warmUp) throw new Error(`${spec.url}${spec.path}: no request completed within ${seconds} s (the machine may be overloaded; raise BENCH_SECONDS)`)
  if (result.non2xx || result.errors) throw new Error(`${spec.url}${spec.path}: ${result.non2xx} non-2xx answers, ${result.errors} errors (${result.timeouts} timeouts)`)
  return result
}

export async function load(spec: LoadSpec): Promise<LoadResult> {
  // warm-up: JIT, connection pools, first-sight person writes; slow first requests are expected
  await fire(spec, Math.min(spec.warmUpSeconds ?? 2, spec.seconds), true)
  const commandsBefore = await spec.databaseCommands?.()
  const rss = sampleRss(spec.pid)
  const targetBefore = cpuSeconds(spec.pid)
  const databaseBefore = spec.databasePid ? cpuSeconds(spec.databasePid) : 0
  const cpuBefore = process.cpuUsage()
  const wallBefore = performance.now()
  const result = await fire(spec, spec.seconds)
  const cpu = process.cpuUsage(cpuBefore)
  const wallMs = performance.now() - wallBefore
  const commandsAfter = await spec.databaseCommands?.()
  const commandsPerRequest = new Map<string, number>()
  for (const [name, total] of commandsAfter ?? []) commandsPerRequest.set(name, (total - (commandsBefore?.get(name) ?? 0)) / result['2xx'])
  return {
    rps: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    generatorCpu: (cpu.user + cpu.system) / 1000 / wallMs,
    peakRssMiB: rss.stop(),
    requests: result['2xx'],
    targetCpuSeconds: cpuSeconds(spec.pid) - targetBefore,
    databaseCpuSeconds: spec.databasePid ? cpuSeconds(spec.databasePid) - databaseBefore : 0,
    commandsPerRequest,
  }
}
