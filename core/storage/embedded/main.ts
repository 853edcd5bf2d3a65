/**
 * Runs the embedded MongoDB-compatible server on its own, so that operators and tools (mongosh,
 * Compass, mongodump) can reach the data while the service is down:
 *
 *   npm run mongo-embedded -- --port 27017 --data ./data/mongo [--host 127.0.0.1] [--replset rs0]
 *
 * Prints one line with the connection URL; SIGTERM or SIGINT closes it cleanly (log flushed).
 */
import { parseArgs } from 'node:util'
import { startEmbeddedMongo } from './index.ts'

const USAGE = 'usage: mongo-embedded [--port 27017] [--data ./data/mongo] [--host 127.0.0.1] [--replset NAME] [--sync-interval-ms 100]'

function fail(message: string): never {
  console.error(message)
  console.error(USAGE)
  process.exit(2)
}

function parseInteger(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) fail(`--${name} must be a non-negative integer, got ${value}`)
  return n
}

async function main(): Promise<void> {
  let values
  try {
    values = parseArgs({
      options: {
        port: { type: 'string' },
        data: { type: 'string' },
        host: { type: 'string' },
        replset: { type: 'string' },
        'sync-interval-ms': { type: 'string' },
        help: { type: 'boolean' },
      },
    }).values
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error))
  }
  if (values.help) {
    console.log(USAGE)
    return
  }
  const server = await startEmbeddedMongo({
    dataDir: values.data ?? './data/mongo',
    host: values.host ?? '127.0.0.1',
    port: parseInteger(values.port, 'port', 27017),
    replSetName: values.replset,
    syncIntervalMs: parseInteger(values['sync-interval-ms'], 'sync-interval-ms', 100),
    // This process does nothing else: no reason for a second thread.
    runIn: 'current-thread',
  })
  console.log(`embedded MongoDB listening on ${server.url} (data: ${values.data ?? './data/mongo'})`)
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    server.close().then(
      () => {
        console.log(`embedded MongoDB stopped (${signal}), log flushed`)
        process.exit(0)
      },
      (error: unknown) => {
        console.error('embedded MongoDB failed to close cleanly', error)
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}

main().catch((error: unknown) => {
  console.error('embedded MongoDB could not start:', error instanceof Error ? error.message : error)
  process.exit(1)
})
