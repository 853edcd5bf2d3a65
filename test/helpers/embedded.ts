import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { MongoClient, type Db } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongoOptions } from '../../core/storage/embedded/index.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const MAIN = path.join(ROOT, 'core/storage/embedded/main.ts')

/** An embedded MongoDB on the test's own thread, opened for `fn` through the real driver and closed after it. */
export async function withEmbeddedDb<T>(options: EmbeddedMongoOptions, fn: (db: Db) => Promise<T>): Promise<T> {
  const server = await startEmbeddedMongo({ runIn: 'current-thread', ...options })
  const client = new MongoClient(server.url)
  try {
    await client.connect()
    return await fn(client.db('app'))
  } finally {
    await client.close()
    await server.close()
  }
}

/**
 * Starts the embedded server's CLI as a child process (to be killed with SIGKILL) and resolves
 * with its URL once it has printed it; `output` is everything it printed so far.
 */
export function startEmbeddedCli(
  dataDir: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--port', '0', '--data', dataDir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the CLI did not start: ${output}`)), 30_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const url = /mongodb:\/\/\S+/.exec(output)?.[0]
      if (url) {
        clearTimeout(timer)
        resolve({ child, url, output: () => output })
      }
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.on('exit', (code) => reject(new Error(`the CLI exited with ${code}: ${output}`)))
  })
}
