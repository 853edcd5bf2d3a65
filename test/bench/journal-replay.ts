/**
 * `npx tsx test/bench/journal-replay.ts`: what the lmdb engine's journal replay adds to a start
 * after a power cut. Inserts JOURNAL_EVENTS (default 20,000: about 31 MB of journal, just under the
 * 32 MB at which a checkpoint starts a new one) event documents in batches of 100 with j: true
 * after the checkpoint taken at open, stops, sets the checkpoint back to an earlier boot and the
 * journal back to what it was before the stop (a clean stop checkpoints and deletes it), then
 * times a start (which rolls back to the checkpoint and replays) against the next, clean one. In
 * process, on the embedded server alone.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongo } from '../../core/storage/embedded/index.ts'
import { fromEarlierBoot } from '../helpers/checkpoint-file.ts'
import { EVENT_INDEXES, eventDocument } from './event-documents.ts'

const EVENTS = Number(process.env.JOURNAL_EVENTS ?? 20_000)

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-journal-replay-'))
const lmdb = path.join(dataDir, 'lmdb')
/** A sync interval of a minute: no checkpoint but the one at open until the stop. */
const options = { dataDir, engine: 'lmdb' as const, runIn: 'current-thread' as const, syncIntervalMs: 60_000 }

async function withClient<T>(fn: (client: MongoClient) => Promise<T>, log?: (m: string) => void): Promise<T> {
  const server = await startEmbeddedMongo({ ...options, log: (level, m) => level === 'warn' && log?.(m) })
  const client = await MongoClient.connect(server.url)
  try {
    return await fn(client)
  } finally {
    await client.close()
    await server.close()
  }
}

async function timedStart(log?: (m: string) => void): Promise<number> {
  const started = performance.now()
  const server = await startEmbeddedMongo({ ...options, log: (level, m) => level === 'warn' && log?.(m) })
  const elapsed = performance.now() - started
  await server.close()
  return elapsed
}

try {
  await withClient((client) => client.db('hedgerow').collection('events').createIndexes(EVENT_INDEXES))
  const disk = await withClient(async (client) => {
    const checkpoint = readFileSync(path.join(lmdb, 'checkpoint'))
    const events = client.db('hedgerow').collection('events')
    for (let from = 0; from < EVENTS; from += 100)
      await events.insertMany(
        Array.from({ length: Math.min(100, EVENTS - from) }, (_, k) => eventDocument(from + k)),
        { writeConcern: { j: true } },
      )
    const journal = readdirSync(lmdb)
      .filter((name) => name.startsWith('journal-'))
      .map((name) => [name, readFileSync(path.join(lmdb, name))] as const)
    return { checkpoint, journal }
  })
  writeFileSync(path.join(lmdb, 'checkpoint'), fromEarlierBoot(disk.checkpoint))
  for (const [name, bytes] of disk.journal) writeFileSync(path.join(lmdb, name), bytes)
  const warnings: string[] = []
  const withReplay = await timedStart((m) => warnings.push(m))
  const clean = await timedStart()
  const count = await withClient((client) => client.db('hedgerow').collection('events').countDocuments())
  const journalBytes = disk.journal.reduce((sum, [, bytes]) => sum + bytes.length, 0)
  console.log(
    `journal_replay: ${(journalBytes / 1e6).toFixed(1)} MB of journal (${EVENTS.toLocaleString('en')} events): start with the replay ${withReplay.toFixed(0)} ms, the next start ${clean.toFixed(0)} ms; ${count.toLocaleString('en')} events after it`,
  )
  console.log(warnings.join('\n'))
  if (count !== EVENTS) process.exitCode = 1
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
