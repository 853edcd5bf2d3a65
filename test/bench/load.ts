/**
 * Measurements that share the machine fairly: every figure compares targets (the service, a
 * baseline) measured in alternating slices of the same run, so that a neighbour's load or a change
 * of clock speed during the run falls on both sides of the ratio instead of on one. A target is
 * warmed up once, then each slice adds its requests, CPU seconds, database commands and request
 * latencies to the target's totals. HTTP targets are driven by autocannon in a thread of its own
 * (closed loop: each connection sends its next request when the previous one is answered;
 * open-loop.ts for a fixed rate; load-thread.ts says why a thread); any
 * non-2xx answer or connection error fails the run.
 */
import type { ClosedLoopSetup } from './closed-loop-sender.ts'
import { latencyHistogram, latencyHistogramOf, percentileMs } from './latency.ts'
import type { Histogram } from './latency.ts'
import { loadThread } from './load-thread.ts'
import { cpuSeconds, sampleRss } from './processes.ts'

/** What one slice of a target yields; slices add up. */
export interface Sample {
  /** Requests answered 2xx (or, for a driver baseline, events stored). */
  units: number
  seconds: number
  /** CPU seconds of the process tree serving the load (the driver baseline: this process). */
  targetCpuSeconds: number
  databaseCpuSeconds: number
  /** CPU seconds of this process (the load generator) during the slice. */
  generatorCpuSeconds: number
  /** Latencies of the requests answered 2xx, µs. */
  latencies: Histogram
  /** Open loop only: how late each request went out after its scheduled time, µs (the generator's own lag). */
  sendLag?: Histogram
  /** Database commands run during the slice, by name. */
  commands: Map<string, number>
}

export interface Target {
  /** Load that is not measured: the target's own warm-up length by default. */
  warmUp(seconds?: number): Promise<void>
  slice(seconds: number): Promise<Sample>
  /** The process whose tree's peak resident memory is reported. */
  readonly rssPid?: number
}

export interface LoadResult {
  /** Units (requests, or events for a driver baseline) per second over all slices. */
  rps: number
  p50: number
  p99: number
  /** CPU used by this process (the load generator) as a share of one core, 0..1+. */
  generatorCpu: number
  /** Open loop only: the 99th percentile of how late requests went out after their schedule, ms. */
  sendLagP99?: number
  peakRssMiB: number
  /** Units over all slices. */
  requests: number
  targetCpuSeconds: number
  databaseCpuSeconds: number
  /** Database commands per unit, by name. */
  commandsPerRequest: Map<string, number>
}

/** Commands run so far by name (serverStatus counters), for the database commands of a slice. */
export type CommandCounter = () => Promise<ReadonlyMap<string, number>>

/**
 * A pause after each slice: the load generator drops the requests in flight when a slice ends,
 * and the target finishes them before the next slice (of another target) starts.
 */
const SETTLE_MS = 300
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
/**
 * Unmeasured load before every later slice: a service that sat idle while the other targets ran
 * answers its first requests slower (fresh connections, caches taken by the others), which would
 * otherwise count against the heavier target once per slice.
 */
const RESUME_SECONDS = 1

/** Measures the targets in `slices` rounds of seconds/slices each, in turn, after warming each up. */
export async function interleave(targets: readonly Target[], seconds: number, slices = 4): Promise<LoadResult[]> {
  for (const target of targets) {
    await target.warmUp()
    await settle()
  }
  const rss = targets.map((t) => (t.rssPid === undefined ? undefined : sampleRss(t.rssPid)))
  const samples: Sample[][] = targets.map(() => [])
  for (let round = 0; round < slices; round++) {
    for (const [i, target] of targets.entries()) {
      if (round > 0 || targets.length > 1) await target.warmUp(RESUME_SECONDS)
      samples[i]!.push(await target.slice(seconds / slices))
      await settle()
    }
  }
  return samples.map((parts, i) => total(parts, rss[i]?.stop() ?? 0))
}

function total(parts: readonly Sample[], peakRssMiB: number): LoadResult {
  const sum = (pick: (s: Sample) => number) => parts.reduce((n, s) => n + pick(s), 0)
  const units = sum((s) => s.units)
  const wall = sum((s) => s.seconds)
  const latencies = latencyHistogram()
  for (const part of parts) latencies.add(part.latencies)
  const lags = parts.flatMap((part) => (part.sendLag ? [part.sendLag] : []))
  const sendLag = latencyHistogram()
  for (const lag of lags) sendLag.add(lag)
  const commands = new Map<string, number>()
  for (const part of parts) for (const [name, n] of part.commands) commands.set(name, (commands.get(name) ?? 0) + n)
  for (const [name, n] of commands) commands.set(name, n / units)
  return {
    rps: units / wall,
    p50: percentileMs(latencies, 50),
    p99: percentileMs(latencies, 99),
    generatorCpu: sum((s) => s.generatorCpuSeconds) / wall,
    ...(lags.length ? { sendLagP99: percentileMs(sendLag, 99) } : {}),
    peakRssMiB,
    requests: units,
    targetCpuSeconds: sum((s) => s.targetCpuSeconds),
    databaseCpuSeconds: sum((s) => s.databaseCpuSeconds),
    commandsPerRequest: commands,
  }
}

/** Runs `work` and measures the slice around it: wall time, CPU of the three sides, database commands. */
export async function measureSlice(
  sides: { targetPid?: number; databasePid?: number; databaseCommands?: CommandCounter },
  work: () => Promise<{ units: number; latencies?: Histogram; sendLag?: Histogram }>,
): Promise<Sample> {
  const commandsBefore = await sides.databaseCommands?.()
  const targetBefore = sides.targetPid === undefined ? 0 : cpuSeconds(sides.targetPid)
  const databaseBefore = sides.databasePid === undefined ? 0 : cpuSeconds(sides.databasePid)
  const cpuBefore = process.cpuUsage()
  const wallBefore = performance.now()
  const { units, latencies = latencyHistogram(), sendLag } = await work()
  const seconds = (performance.now() - wallBefore) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  const generatorCpuSeconds = (cpu.user + cpu.system) / 1e6
  const commandsAfter = await sides.databaseCommands?.()
  const commands = new Map<string, number>()
  for (const [name, n] of commandsAfter ?? []) commands.set(name, n - (commandsBefore?.get(name) ?? 0))
  return {
    units,
    seconds,
    targetCpuSeconds: sides.targetPid === undefined ? generatorCpuSeconds : cpuSeconds(sides.targetPid) - targetBefore,
    databaseCpuSeconds: sides.databasePid === undefined ? 0 : cpuSeconds(sides.databasePid) - databaseBefore,
    generatorCpuSeconds,
    latencies,
    ...(sendLag ? { sendLag } : {}),
    commands,
  }
}

export interface HttpLoad {
  url: string
  path: string
  bodies: readonly string[]
  connections: number
  /** The process serving the load, for its CPU use and peak RSS. */
  pid: number
  databasePid?: number
  databaseCommands?: CommandCounter
  /** Load before the first slice (default 2 s): JIT, pools, first-sight writes. */
  warmUpSeconds?: number
}

/** POST bodies taken in turn from a list, `connections` at a time, with autocannon (closed loop) in a thread of its own. */
export function httpTarget(spec: HttpLoad): Target {
  const setup: ClosedLoopSetup = { url: spec.url, path: spec.path, connections: spec.connections, bodies: spec.bodies }
  const run = loadThread(new URL('./closed-loop-sender.ts', import.meta.url), setup)
  return {
    rssPid: spec.pid,
    warmUp: async (seconds = spec.warmUpSeconds ?? 2) => {
      // slow first requests (JIT, pools, first-sight person writes) are expected here
      await run({ seconds, record: false })
    },
    slice: (seconds) =>
      measureSlice(
        { targetPid: spec.pid, databasePid: spec.databasePid, databaseCommands: spec.databaseCommands },
        async () => {
          const result = await run({ seconds, record: true })
          return { units: result.answered, latencies: latencyHistogramOf(result.latencies) }
        },
      ),
  }
}
