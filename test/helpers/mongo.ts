/**
 * The database every test uses: MONGODB_URL when set (a real MongoDB), otherwise one embedded
 * server per test process, started on first use in a temporary folder and closed by the mocha
 * root hook below (or, failing that, removed at process exit).
 *
 * The embedded server answers as the one-member replica set "rs0", like production's replica set,
 * so change streams work in tests too.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import type { CommandStartedEvent } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../../core/storage/embedded/index.ts'

let embedded: Promise<{ server: EmbeddedMongo; dataDir: string }> | undefined
let counter = 0

async function startOnce(): Promise<{ server: EmbeddedMongo; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-mongo-'))
  process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }))
  // The folder is thrown away after the run: no fsync needed for it.
  const server = await startEmbeddedMongo({ dataDir, replSetName: 'rs0', syncIntervalMs: 60_000 })
  return { server, dataDir }
}

export async function testMongoUrl(): Promise<string> {
  const external = process.env.MONGODB_URL
  if (external) return external
  embedded ??= startOnce()
  return (await embedded).server.url
}

/** A database name no other call (in this or another test process) returns. */
/** A connected client of the test database that shows every command it sends to `onCommand`. */
export async function monitoredClient(onCommand: (event: CommandStartedEvent) => void): Promise<MongoClient> {
  const client = new MongoClient(await testMongoUrl(), { monitorCommands: true })
  client.on('commandStarted', onCommand)
  await client.connect()
  return client
}

export function testDbName(prefix: string): string {
  counter += 1
  const safe = prefix.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 24)
  return `${safe}_${process.pid.toString(36)}_${counter}_${Math.random().toString(36).slice(2, 6)}`
}

/** Closes the embedded server (if one was started) and removes its folder. */
export async function stopTestMongo(): Promise<void> {
  const running = embedded
  embedded = undefined
  if (!running) return
  const { server, dataDir } = await running
  await server.close()
  rmSync(dataDir, { recursive: true, force: true })
}

/** Mocha root hook plugin: load this file with mocha's `require` to close the server after all tests. */
export const mochaHooks = {
  async afterAll(): Promise<void> {
    await stopTestMongo()
  },
}
