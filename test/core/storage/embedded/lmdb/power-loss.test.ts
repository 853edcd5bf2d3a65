import { expect } from 'chai'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Db } from 'mongodb'
import { startEmbeddedMongo } from '../../../../../core/storage/embedded/index.ts'
import { withEmbeddedDb } from '../../../../helpers/embedded.ts'
import {
  CHECKPOINT_META,
  CHECKPOINT_RECORD as RECORD,
  fromEarlierBoot,
  slots,
  wholeRecord,
} from '../../../../helpers/checkpoint-file.ts'
import { folderPerTest } from '../../../../helpers/folders.ts'

/**
 * What a power cut leaves of the lmdb data file, built by hand: the file as of its last
 * checkpoint, plus later commits that reached the disk only in part. lmdb keeps two meta records,
 * in pages 0 and 1 after a 24-byte page header (txnid at byte 128 of the record); the checkpoint
 * file holds, in two slots written in turn, a copy of a checkpointed commit's record and the boot it
 * was taken in, each with a CRC-32.
 */
const PAGE = 8192
const HEADER = 24
const TXNID = 128
const newestTxnid = (file: Buffer) =>
  [0, 1].map((page) => file.readBigUInt64LE(page * PAGE + HEADER + TXNID)).reduce((a, b) => (a > b ? a : b))
/** The newest checkpointed txnid among the file's whole records. */
const checkpointTxnid = (file: Buffer) =>
  slots(file)
    .filter(wholeRecord)
    .map((record) => record.readBigUInt64LE(CHECKPOINT_META + TXNID))
    .reduce((a, b) => (a > b ? a : b))

interface Event {
  _id: number
  project_id: number
  n: number
  pad?: string
  updated?: boolean
}

const dataFile = (dataDir: string) => path.join(dataDir, 'lmdb', 'data.mdb')
const checkpointFile = (dataDir: string) => path.join(dataDir, 'lmdb', 'checkpoint')
const journalFiles = (dataDir: string) =>
  readdirSync(path.join(dataDir, 'lmdb')).filter((name) => name.startsWith('journal-'))
const readJournal = (dataDir: string) =>
  new Map(journalFiles(dataDir).map((name) => [name, readFileSync(path.join(dataDir, 'lmdb', name))]))

/** `data` with every page that differs from `checkpointed` made garbage (torn, or never on the disk). */
function garbleLaterPages(data: Buffer, checkpointed: Buffer): { file: Buffer; damaged: number } {
  const file = Buffer.from(data)
  let damaged = 0
  for (let page = 2; page * PAGE < file.length; page++) {
    const start = page * PAGE
    const same =
      start + PAGE <= checkpointed.length &&
      file.subarray(start, start + PAGE).equals(checkpointed.subarray(start, start + PAGE))
    if (same) continue
    file.fill(0xa5, start, start + PAGE)
    damaged += 1
  }
  return { file, damaged }
}

/**
 * What a power cut leaves: the data file's commits since the checkpoint lost (their pages garbage),
 * the checkpoint from an earlier boot, and the journal as fdatasynced.
 */
function powerCut(
  dataDir: string,
  disk: { data: Buffer; checkpoint: Buffer; after: Buffer; journal: Map<string, Buffer> },
): void {
  const { file, damaged } = garbleLaterPages(disk.after, disk.data)
  expect(damaged, 'the lost commits wrote pages').to.be.greaterThan(0)
  writeFileSync(dataFile(dataDir), file)
  writeFileSync(checkpointFile(dataDir), fromEarlierBoot(disk.checkpoint))
  for (const [name, bytes] of disk.journal) writeFileSync(path.join(dataDir, 'lmdb', name), bytes)
}

/** `syncIntervalMs` long: no checkpoint but the ones at start, on j: true and at close. */
function withDb<T>(dataDir: string, fn: (db: Db) => Promise<T>, warnings: string[] = []): Promise<T> {
  return withEmbeddedDb(
    {
      dataDir,
      engine: 'lmdb',
      syncIntervalMs: 60_000,
      log: (level, message) => {
        if (level === 'warn') warnings.push(message)
      },
    },
    fn,
  )
}

describe('embedded MongoDB lmdb engine: power loss', function () {
  this.timeout(60_000)
  let dataDir: string
  folderPerTest('hedgerow-power-', (folder) => (dataDir = folder))

  it('answers a j: true write once its journal record is on the disk, and after a reboot redoes the commits since the last checkpoint', async () => {
    const before = Array.from({ length: 300 }, (_, i) => ({ _id: i, project_id: 1, n: i, pad: 'a'.repeat(500) }))
    const disk = await withDb(dataDir, async (db) => {
      // the checkpoint taken at open: with a sync interval of a minute, the only one before the close
      const atCheckpoint = { data: readFileSync(dataFile(dataDir)), checkpoint: readFileSync(checkpointFile(dataDir)) }
      const events = db.collection<Event>('events')
      await events.createIndex({ project_id: 1, n: 1 })
      await events.insertMany(before, { writeConcern: { j: true } })
      await events.deleteMany({ _id: { $lt: 100 } }, { writeConcern: { j: true } })
      await events.updateOne({ _id: 150 }, { $set: { n: -1 } }, { writeConcern: { j: true } })
      expect(checkpointTxnid(readFileSync(checkpointFile(dataDir)))).to.equal(checkpointTxnid(atCheckpoint.checkpoint))
      return { ...atCheckpoint, after: readFileSync(dataFile(dataDir)), journal: readJournal(dataDir) }
    })
    expect(disk.journal.size).to.be.greaterThan(0)
    powerCut(dataDir, disk)

    const warnings: string[] = []
    await withDb(
      dataDir,
      async (db) => {
        const events = db.collection<Event>('events')
        expect(await events.countDocuments()).to.equal(200)
        expect(await events.findOne({ _id: 150 })).to.deep.include({ n: -1 })
        expect(await events.countDocuments({ project_id: 1, n: { $gte: 250 } })).to.equal(50)
        await events.insertOne({ _id: 5000, project_id: 1, n: 5000 }, { writeConcern: { j: true } })
      },
      warnings,
    )
    expect(warnings.join('\n')).to.match(/opened at its last checkpoint.*; \d+ were redone from the journal/)
    expect(journalFiles(dataDir), 'the replayed journal is deleted once a checkpoint holds it').to.have.length(0)
    expect(await withDb(dataDir, (db) => db.collection('events').countDocuments())).to.equal(201)
  })

  it('makes a transaction too large for the journal durable by a checkpoint, and replays the journal after it', async () => {
    const big = Array.from({ length: 20 }, (_, i) => ({ _id: i, project_id: 1, n: i, pad: 'x'.repeat(1_000_000) }))
    const disk = await withDb(dataDir, async (db) => {
      const events = db.collection<Event>('events')
      await events.insertOne({ _id: -1, project_id: 1, n: -1 }, { writeConcern: { j: true } })
      const journaled = checkpointTxnid(readFileSync(checkpointFile(dataDir)))
      expect(journaled < newestTxnid(readFileSync(dataFile(dataDir))), 'a small write: no checkpoint').to.equal(true)
      await events.insertMany(big, { writeConcern: { j: true } })
      expect(checkpointTxnid(readFileSync(checkpointFile(dataDir)))).to.equal(journaled)
      // the driver sends at most 16 MB of documents a command: an update of them all rewrites 20 MB
      await events.updateMany({ n: { $gte: 0 } }, { $set: { updated: true } }, { writeConcern: { j: true } })
      const atCheckpoint = { data: readFileSync(dataFile(dataDir)), checkpoint: readFileSync(checkpointFile(dataDir)) }
      expect(checkpointTxnid(atCheckpoint.checkpoint) >= newestTxnid(atCheckpoint.data)).to.equal(true)
      await events.insertOne({ _id: 100, project_id: 1, n: 100 }, { writeConcern: { j: true } })
      return { ...atCheckpoint, after: readFileSync(dataFile(dataDir)), journal: readJournal(dataDir) }
    })
    powerCut(dataDir, disk)
    await withDb(dataDir, async (db) => {
      const events = db.collection<Event>('events')
      expect(await events.countDocuments()).to.equal(22)
      expect(await events.findOne({ _id: 100 })).to.deep.equal({ _id: 100, project_id: 1, n: 100 })
      expect(await events.findOne({ _id: 19 })).to.deep.equal({ ...big[19], updated: true })
    })
  })

  it('opens at the last checkpoint when a later commit reached the disk only in part before a reboot', async () => {
    const before = Array.from({ length: 300 }, (_, i) => ({ _id: i, project_id: 1, n: i, pad: 'a'.repeat(500) }))
    await withDb(dataDir, async (db) => {
      await db.collection<Event>('events').createIndex({ project_id: 1, n: 1 })
      await db.collection<Event>('events').insertMany(before, { writeConcern: { j: true } })
    })
    const checkpointed = readFileSync(dataFile(dataDir))
    const checkpoint = readFileSync(checkpointFile(dataDir))
    await withDb(dataDir, async (db) => {
      // pages freed by the deletes are not reused while the checkpoint's read transaction holds them
      await db.collection<Event>('events').deleteMany({ _id: { $lt: 150 } })
      for (let i = 0; i < 5; i++) await db.collection<Event>('events').insertOne({ _id: 2000 + i, project_id: 2, n: i })
      await db
        .collection<Event>('events')
        .insertMany(
          Array.from({ length: 300 }, (_, i) => ({ _id: 1000 + i, project_id: 1, n: 1000 + i, pad: 'b'.repeat(500) })),
        )
    })
    const after = readFileSync(dataFile(dataDir))
    expect(newestTxnid(after) > checkpointTxnid(checkpoint)).to.equal(true)

    // The power cut: the checkpoint on the disk is the earlier one, taken in an earlier boot, and
    // every page written since is garbage (torn, or never on the disk); the newest meta record names them.
    const { file: crashed, damaged } = garbleLaterPages(after, checkpointed)
    expect(damaged, 'the lost commits wrote pages').to.be.greaterThan(20)
    writeFileSync(dataFile(dataDir), crashed)
    writeFileSync(checkpointFile(dataDir), fromEarlierBoot(checkpoint))

    const warnings: string[] = []
    await withDb(
      dataDir,
      async (db) => {
        const events = db.collection<Event>('events')
        expect(await events.countDocuments()).to.equal(300)
        expect(await events.find({}, { sort: { _id: 1 } }).toArray()).to.deep.equal(before)
        expect(await events.find({ project_id: 1, n: { $gte: 250 } }).toArray()).to.have.length(50)
        await events.insertOne({ _id: 5000, project_id: 1, n: 5000 }, { writeConcern: { j: true } })
        expect(await events.countDocuments({ n: { $gte: 300 } })).to.equal(1)
      },
      warnings,
    )
    expect(warnings.join('\n')).to.include('the data file was opened at its last checkpoint')
  })

  it('after a reboot, passes over a checkpoint record torn by the power cut for the other slot, and refuses a file with none whole', async () => {
    await withDb(dataDir, async (db) => {
      await db.collection('c').insertMany([{ x: 1 }, { x: 2 }], { writeConcern: { j: true } })
      await db.collection('c').insertOne({ x: 3 }, { writeConcern: { j: true } })
    })
    const file = readFileSync(checkpointFile(dataDir))
    const newest = slots(file).find(
      (r) => wholeRecord(r) && r.readBigUInt64LE(CHECKPOINT_META + TXNID) === checkpointTxnid(file),
    )!
    const torn = Buffer.alloc(RECORD, 0xa5)
    for (const layout of [
      [newest, torn],
      [torn, newest],
    ]) {
      writeFileSync(checkpointFile(dataDir), fromEarlierBoot(Buffer.concat(layout)))
      expect(await withDb(dataDir, (db) => db.collection('c').countDocuments())).to.equal(3)
    }
    writeFileSync(checkpointFile(dataDir), Buffer.concat([torn, torn]))
    const error = await startEmbeddedMongo({ dataDir, engine: 'lmdb', runIn: 'current-thread' }).then(
      async (server) => {
        await server.close()
        return undefined
      },
      (e: Error) => e,
    )
    expect(error?.message).to.include(`${checkpointFile(dataDir)} is damaged`)
  })

  it('refuses to start, naming the file, when a meta page is damaged (lmdb itself would crash)', async () => {
    await withDb(dataDir, async (db) => {
      await db.collection('c').insertOne({ x: 1 }, { writeConcern: { j: true } })
    })
    const good = readFileSync(dataFile(dataDir))
    for (const page of [0, 1]) {
      const damaged = Buffer.from(good)
      damaged.fill(0xa5, page * PAGE, (page + 1) * PAGE)
      writeFileSync(dataFile(dataDir), damaged)
      const error = await startEmbeddedMongo({ dataDir, engine: 'lmdb', runIn: 'current-thread' }).then(
        async (server) => {
          await server.close()
          return undefined
        },
        (e: Error) => e,
      )
      expect(error?.message).to.include(`${dataFile(dataDir)} is damaged (meta page ${page} is not an LMDB meta page)`)
    }
    writeFileSync(dataFile(dataDir), good)
    expect(await withDb(dataDir, (db) => db.collection('c').countDocuments())).to.equal(1)
  })
})
