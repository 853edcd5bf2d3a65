/**
 * The embedded server's CLI (core/storage/embedded/main.ts) as a child process of a given storage
 * engine, and the memory figures of a process, for the storage-scale measurements.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'

const ROOT = path.resolve(import.meta.dirname, '../..')
const MAIN = path.join(ROOT, 'core/storage/embedded/main.ts')

/** Anonymous resident memory of a process (bytes, from /proc): heap, not the file page cache. */
export function rssAnon(pid: number): number {
  const line = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(line?.[1] ?? 0) * 1024
}

/** Resident bytes of `file` mapped into a process (from /proc/pid/smaps): the pages of it the process has read. */
export function mappedBytes(pid: number, file: string): number {
  let inFile = false
  let kB = 0
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.endsWith(` ${file}`)
    else if (inFile && line.startsWith('Rss:')) kB += Number(line.split(/\s+/)[1])
  }
  return kB * 1024
}

/** CPU time (user + system, ms) a process has used: unlike wall time, barely moved by other jobs. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
}

/**
 * Page faults a process has taken: minor (the page was in the page cache, or zero-filled) and
 * major (the page had to be read from the disk), as counted in /proc/pid/stat.
 */
export function pageFaults(pid: number): { minor: number; major: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return { minor: Number(fields[7]), major: Number(fields[9]) }
}

/** Linux's USER_HZ, the unit of /proc/pid/stat's times. */
const CLOCK_TICKS = 100

export interface EmbeddedChild {
  child: ChildProcess
  url: string
  stop(): Promise<void>
}

/**
 * Starts the CLI on `dataDir` with `engine` (undefined: the default engine, whatever
 * EMBEDDED_MONGO_ENGINE says here); resolves once it has printed its URL.
 */
export function startEmbeddedChild(dataDir: string, engine: string | undefined): Promise<EmbeddedChild> {
  const env = { ...process.env, EMBEDDED_MONGO_ENGINE: engine }
  if (engine === undefined) delete env.EMBEDDED_MONGO_ENGINE
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--port', '0', '--data', dataDir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  })
  let output = ''
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start within 10 minutes: ${output}`)), 600_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const url = /mongodb:\/\/\S+/.exec(output)?.[0]
      if (url) {
        clearTimeout(timer)
        resolve({ child, url, stop })
      }
    })
    child.stderr!.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000)
    })
    child.on('exit', (code) => reject(new Error(`the server exited with ${code}: ${output}`)))
  })
}
