/**
 * The bench's child processes, all on loopback: the embedded database (its own process, so that its
 * CPU is not charged to the load generator), the service (compiled, exactly as `npm start` runs
 * it: core/launch.js builds dist/ first when it is stale), and the bare node:http baselines. Also samples a process tree's resident memory.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'

export const ROOT = path.resolve(import.meta.dirname, '../..')

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

export interface Child {
  readonly process: ChildProcess
  readonly url: string
  stop(): Promise<void>
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000)
      child.once('exit', () => {
        clearTimeout(kill)
        resolve()
      })
      child.kill('SIGTERM')
    })
}

async function waitFor(url: string, child: ChildProcess, what: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}:\n${output()}`)
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${what} did not answer ${url} within 60 s:\n${output()}`)
}

/** A node process; `args` name a TypeScript file (run through tsx) or core/launch.js (compiled). */
function spawnNode(
  args: string[],
  env: Record<string, string>,
  root = ROOT,
): { child: ChildProcess; output: () => string } {
  const launcher = args.indexOf('core/launch.js')
  // a tree from before the compiled launcher runs its entry point's source through tsx
  if (launcher >= 0 && !existsSync(path.join(root, 'core/launch.js')))
    args = [...args.slice(0, launcher), `${args[launcher + 1]}.ts`, ...args.slice(launcher + 2)]
  const loader = args.includes('core/launch.js') ? [] : ['--import', 'tsx']
  const child = spawn(process.execPath, [...loader, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)))
  return { child, output: () => stderr }
}

/**
 * `env`: e.g. EMBEDDED_MONGO_ENGINE, to run one engine beside another (engines.ts); `root`: the
 * source tree to run it from (another checkout, to compare two versions in one run).
 */
export async function startMongo(
  dataDir: string,
  cpuProfDir?: string,
  env: Record<string, string> = {},
  root = ROOT,
): Promise<Child> {
  const port = await freePort()
  const profile = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []
  // as the service runs its own store (core/storage/mongo.ts): a one-member replica set
  const replSet = process.env.BENCH_MONGO_STANDALONE === '1' ? [] : ['--replset', 'rs0']
  const { child, output } = spawnNode(
    [...profile, 'core/launch.js', 'core/storage/embedded/main', '--port', String(port), '--data', dataDir, ...replSet],
    env,
    root,
  )
  const url = `mongodb://127.0.0.1:${port}/${replSet.length ? '?directConnection=true&replicaSet=rs0' : ''}`
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`embedded MongoDB exited:\n${output()}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)))
      socket.once('error', () => resolve(false))
    })
    if (open) return { process: child, url, stop: stopper(child) }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`embedded MongoDB did not listen within 30 s:\n${output()}`)
}

export interface ServiceSettings {
  mongodbUrl: string
  database: string
  dataDir: string
  adminKey: string
  workers: number
  logLevel: string
  /** Folder for `--cpu-prof` output; unset: no profiling. */
  cpuProfDir?: string
  /** Node options before the entry point, beside the launcher's own. */
  nodeArgs?: string[]
  /** The source tree to run (another checkout, to compare two versions in one run). */
  root?: string
  /** More environment variables. */
  env?: Record<string, string>
}

export async function startService(s: ServiceSettings): Promise<Child> {
  const port = await freePort()
  const profile = s.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', s.cpuProfDir] : []
  const { child, output } = spawnNode(
    [...profile, ...(s.nodeArgs ?? []), 'core/launch.js', 'core/main'],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      MONGODB_URL: s.mongodbUrl,
      MONGODB_DB: s.database,
      DATA_DIR: s.dataDir,
      ADMIN_API_KEY: s.adminKey,
      LOG_LEVEL: s.logLevel,
      WORKERS: String(s.workers),
      ...s.env,
    },
    s.root,
  )
  const url = `http://127.0.0.1:${port}`
  await waitFor(`${url}/_health`, child, 'the service', output)
  return { process: child, url, stop: stopper(child) }
}

export async function startBaselines(mongodbUrl: string, database: string): Promise<Child> {
  const port = await freePort()
  const { child, output } = spawnNode(['test/bench/baselines.ts'], {
    PORT: String(port),
    MONGODB_URL: mongodbUrl,
    MONGODB_DB: database,
  })
  const url = `http://127.0.0.1:${port}`
  await waitFor(`${url}/health`, child, 'the baselines', output)
  return { process: child, url, stop: stopper(child) }
}

function childrenOf(pid: number): number[] {
  const out: number[] = []
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
      if (list) out.push(...list.split(/\s+/).map(Number))
    }
  } catch {
    // the process has gone
  }
  return out
}

function rssKiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) : 0
  } catch {
    return 0
  }
}

/** CPU seconds (user + system) used so far by a process and its descendants, from /proc. */
export function cpuSeconds(pid: number): number {
  const pids = [pid]
  for (let i = 0; i < pids.length && i < 64; i++) pids.push(...childrenOf(pids[i]!))
  let ticks = 0
  for (const p of pids) {
    try {
      // fields after the parenthesised command name: state is the 3rd, utime the 14th, stime the 15th
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // the process has gone
    }
  }
  return ticks / 100
}

/** The summed resident memory of a process and its descendants now, in KiB. */
function treeRssKiB(pid: number): number {
  const pids = [pid]
  for (let i = 0; i < pids.length && i < 64; i++) pids.push(...childrenOf(pids[i]!))
  return pids.reduce((sum, p) => sum + rssKiB(p), 0)
}

/** The summed resident memory of a process and its descendants now, in MiB. */
export const treeRssMiB = (pid: number): number => treeRssKiB(pid) / 1024

/** Samples the summed resident memory of a process and its descendants until stopped; peak in MiB. */
export function sampleRss(pid: number, everyMs = 100): { stop(): number } {
  let peak = 0
  const sample = () => {
    peak = Math.max(peak, treeRssKiB(pid))
  }
  sample()
  const timer = setInterval(sample, everyMs)
  return {
    stop() {
      clearInterval(timer)
      sample()
      return peak / 1024
    },
  }
}

/** The admin key the bench's services start with. */
export const BENCH_ADMIN_KEY = 'bench-admin-key-0123456789'

/** An admin API call to a bench service; anything but 2xx fails the run with the answer. */
export async function admin(
  service: Child,
  method: string,
  p: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(service.url + p, {
    method,
    headers: { Authorization: `Bearer ${BENCH_ADMIN_KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${method} ${p} answered ${response.status}: ${await response.text()}`)
  return (await response.json()) as Record<string, unknown>
}
