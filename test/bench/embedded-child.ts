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

export interface EmbeddedChild {
  child: ChildProcess
  url: string
  stop(): Promise<void>
}

/** Starts the CLI on `dataDir` with `engine`; resolves once it has printed its URL. */
export function startEmbeddedChild(dataDir: string, engine: string): Promise<EmbeddedChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--port', '0', '--data', dataDir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, EMBEDDED_MONGO_ENGINE: engine },
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
