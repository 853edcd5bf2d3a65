/**
 * Runs the embedded MongoDB-compatible server on its own, so that operators and tools (mongosh,
 * Compass, mongodump) can reach the data while the service is down:
 *
 *   npm run mongo-embedded -- --data ./data/mongo [--replset rs0] [--port 27017 [--host 127.0.0.1]]
 *
 * It listens on the Unix socket in the data folder (only its owner can connect); --port adds a
 * TCP listener, which any local user can use (the server has no authentication). Prints one line
 * with the connection URL (the TCP one when --port is given); SIGTERM or SIGINT closes it cleanly.
 */
import { parseArgs } from 'node:util'
import { startEmbeddedMongo } from './index.ts'

const USAGE =
  'usage: mongo-embedded [--data ./data/mongo] [--replset NAME] [--sync-interval-ms 100] [--port N [--host 127.0.0.1]]  (--port adds TCP, open to every local user)'

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
  const options = {
    port: { type: 'string' },
    data: { type: 'string' },
    host: { type: 'string' },
    replset: { type: 'string' },
    'sync-interval-ms': { type: 'string' },
    help: { type: 'boolean' },
  } as const
  let values: ReturnType<typeof parseArgs<{ options: typeof options }>>['values']
  try {
    values = parseArgs({ options }).values
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error))
  }
  if (values.help) {
    console.log(USAGE)
    return
  }
  if (values.host !== undefined && values.port === undefined)
    fail('--host needs --port (without them it listens on the Unix socket only)')
  const server = await startEmbeddedMongo({
    dataDir: values.data ?? './data/mongo',
    tcp:
      values.port === undefined
        ? undefined
        : { host: values.host ?? '127.0.0.1', port: parseInteger(values.port, 'port', 27017) },
    replSetName: values.replset,
    syncIntervalMs: parseInteger(values['sync-interval-ms'], 'sync-interval-ms', 100),
    // This process does nothing else: no reason for a second thread.
    runIn: 'current-thread',
  })
  const data = values.data ?? './data/mongo'
  if (server.tcpUrl) {
    console.log(
      `embedded MongoDB listening on ${server.tcpUrl} (data: ${data}; TCP: any local user can connect) and on ${server.url}`,
    )
  } else {
    console.log(`embedded MongoDB listening on ${server.url} (data: ${data}; Unix socket, only this user can connect)`)
  }
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
