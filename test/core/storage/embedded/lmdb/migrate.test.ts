import { expect } from 'chai'
import { cpSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Db } from 'mongodb'
import { withEmbeddedDb } from '../../../../helpers/embedded.ts'
import { folderPerTest } from '../../../../helpers/folders.ts'

describe('embedded MongoDB lmdb engine: migration of a data folder written by the in-memory engine', function () {
  this.timeout(60_000)
  let dataDir: string
  folderPerTest('hedgerow-migrate-', (folder) => (dataDir = folder))

  it('copies every collection, document and index once, and keeps the old files in pre-lmdb/', async () => {
    // today's format: a snapshot (forced by compact) and a log written after it
    await withEmbeddedDb({ dataDir, engine: 'memory' }, async (db) => {
      await db.collection('persons').createIndex({ project_id: 1, distinct_id: 1 }, { unique: true })
      await db.collection('events').createIndex({ tags: 1 })
      await db
        .collection('persons')
        .insertMany(Array.from({ length: 3000 }, (_, i) => ({ project_id: 1, distinct_id: `d${i}`, n: i })))
      await db.command({ compact: 'persons' })
      await db.collection('persons').updateOne({ distinct_id: 'd7' }, { $set: { n: -7 } })
      await db.collection('persons').deleteOne({ distinct_id: 'd8' })
      await db.collection('events').insertOne({ _id: 'e1' as never, tags: ['a', 'b'], big: 2n ** 40n })
      await db.collection('old').insertOne({ x: 1 })
      await db.collection('old').rename('renamed')
    })
    expect(readdirSync(dataDir).some((f) => f.startsWith('wal-'))).to.equal(true)

    const check = async (db: Db) => {
      const persons = db.collection('persons')
      expect(await persons.countDocuments()).to.equal(2999)
      expect((await persons.findOne({ project_id: 1, distinct_id: 'd7' }))?.n).to.equal(-7)
      expect(await persons.findOne({ distinct_id: 'd8' })).to.equal(null)
      const plan = await persons.find({ project_id: 1, distinct_id: 'd9' }).explain()
      expect(JSON.stringify(plan)).to.include('project_id_1_distinct_id_1')
      const duplicate = await persons.insertOne({ project_id: 1, distinct_id: 'd9' }).catch((e: { code?: number }) => e)
      expect((duplicate as { code?: number }).code).to.equal(11000)
      expect(await db.collection('events').countDocuments({ tags: 'b' })).to.equal(1)
      expect(
        (await db.collection('events').findOne({ _id: 'e1' as never }, { promoteLongs: false }))?.big._bsontype,
      ).to.equal('Long')
      expect(await db.collection('renamed').countDocuments()).to.equal(1)
      expect((await db.listCollections().toArray()).map((c) => c.name).sort()).to.deep.equal([
        'events',
        'persons',
        'renamed',
      ])
    }
    const warnings: string[] = []
    const log = (level: string, message: string) => {
      if (level === 'warn') warnings.push(message)
    }
    await withEmbeddedDb({ dataDir, engine: 'lmdb', log }, check)
    // a migration takes a while on a large folder: the operator is told before and after
    expect(warnings).to.have.length(2)
    expect(warnings[0]).to.include("holds the in-memory engine's snapshot and log: copying them into lmdb once")
    expect(warnings[1]).to.match(/^copied 3001 documents of 3 collections .* the old files are in .*pre-lmdb/)
    const names = readdirSync(dataDir)
    expect(names.filter((f) => f.startsWith('wal-') || f.startsWith('snapshot-'))).to.deep.equal([])
    expect(readdirSync(path.join(dataDir, 'pre-lmdb')).some((f) => f.startsWith('wal-'))).to.equal(true)
    // a second start reads lmdb only (the old files are out of the way) and finds the same
    await withEmbeddedDb({ dataDir, engine: 'lmdb', log }, check)
    expect(warnings).to.have.length(2)
  })

  it('starts a migration that was cut short over from the old files, which are still in place', async () => {
    await withEmbeddedDb({ dataDir, engine: 'memory' }, (db) => db.collection('c').insertMany([{ n: 1 }, { n: 2 }]))
    // an lmdb folder holding part of a copy and no "migrated" mark, as a crash mid-migration leaves it
    const other = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-migrate-partial-'))
    try {
      await withEmbeddedDb({ dataDir: other, engine: 'lmdb' }, (db) =>
        db.collection('c').insertOne({ n: 1, partial: true }),
      )
      cpSync(path.join(other, 'lmdb'), path.join(dataDir, 'lmdb'), { recursive: true })
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
    await withEmbeddedDb({ dataDir, engine: 'lmdb', log: () => undefined }, async (db) => {
      expect(
        await db
          .collection('c')
          .find({}, { projection: { _id: 0 } })
          .toArray(),
      ).to.deep.equal([{ n: 1 }, { n: 2 }])
    })
  })

  it('only moves the old files when a start stopped after copying them but before moving them', async () => {
    const silent = { log: () => undefined }
    await withEmbeddedDb({ dataDir, engine: 'memory' }, (db) => db.collection('c').insertOne({ n: 1 }))
    await withEmbeddedDb({ dataDir, engine: 'lmdb', ...silent }, async () => undefined)
    // as a crash between the copy's last commit and the move leaves the folder (rename keeps mtimes)
    for (const f of readdirSync(path.join(dataDir, 'pre-lmdb')))
      renameSync(path.join(dataDir, 'pre-lmdb', f), path.join(dataDir, f))
    const docs = (db: Db) =>
      db
        .collection('c')
        .find({}, { projection: { _id: 0 } })
        .toArray()
    expect(await withEmbeddedDb({ dataDir, engine: 'lmdb', ...silent }, docs)).to.deep.equal([{ n: 1 }])
    expect(readdirSync(dataDir).filter((f) => f.startsWith('wal-'))).to.deep.equal([])
  })

  it('refuses, losing nothing, files the in-memory engine wrote on the folder after it was migrated', async () => {
    const silent = { log: () => undefined }
    await withEmbeddedDb({ dataDir, engine: 'memory' }, (db) => db.collection('c').insertOne({ n: 1 }))
    await withEmbeddedDb({ dataDir, engine: 'lmdb', ...silent }, (db) => db.collection('c').insertOne({ n: 2 }))
    const kept = readdirSync(path.join(dataDir, 'pre-lmdb')).map((f) => [
      f,
      statSync(path.join(dataDir, 'pre-lmdb', f)).size,
    ])
    // going back to the in-memory engine without moving the files back starts it empty, and it writes
    await withEmbeddedDb({ dataDir, engine: 'memory' }, (db) => db.collection('c').insertOne({ n: 3 }))

    const error = await withEmbeddedDb({ dataDir, engine: 'lmdb', ...silent }, async () => undefined).then(
      () => undefined,
      (e: Error) => e,
    )
    expect(error?.message).to.match(/files the in-memory engine wrote after .* EMBEDDED_MONGO_ENGINE=memory/)
    const docs = (db: Db) =>
      db
        .collection('c')
        .find({}, { projection: { _id: 0 } })
        .toArray()
    expect(await withEmbeddedDb({ dataDir, engine: 'memory' }, docs)).to.deep.equal([{ n: 3 }])
    const keptAfter = readdirSync(path.join(dataDir, 'pre-lmdb')).map((f) => [
      f,
      statSync(path.join(dataDir, 'pre-lmdb', f)).size,
    ])
    expect(keptAfter).to.deep.equal(kept)
    // once they are moved away, lmdb starts on its own data
    rmSync(path.join(dataDir, readdirSync(dataDir).find((f) => f.startsWith('wal-'))!))
    expect(await withEmbeddedDb({ dataDir, engine: 'lmdb', ...silent }, docs)).to.deep.equal([{ n: 1 }, { n: 2 }])
  })

  it('is what the default engine does with such a folder: an upgrade keeps the data', async () => {
    await withEmbeddedDb({ dataDir, engine: 'memory' }, async (db) => {
      await db.collection('persons').createIndex({ distinct_id: 1 }, { unique: true })
      await db.collection('persons').insertMany([{ distinct_id: 'a' }, { distinct_id: 'b' }])
    })
    const saved = process.env.EMBEDDED_MONGO_ENGINE
    delete process.env.EMBEDDED_MONGO_ENGINE
    try {
      await withEmbeddedDb({ dataDir, log: () => undefined }, async (db) => {
        const persons = db.collection('persons')
        expect(await persons.find({}, { projection: { _id: 0 } }).toArray()).to.deep.equal([
          { distinct_id: 'a' },
          { distinct_id: 'b' },
        ])
        const duplicate = await persons.insertOne({ distinct_id: 'a' }).catch((e: { code?: number }) => e)
        expect((duplicate as { code?: number }).code).to.equal(11000)
      })
    } finally {
      if (saved !== undefined) process.env.EMBEDDED_MONGO_ENGINE = saved
    }
    expect(existsSync(path.join(dataDir, 'lmdb', 'data.mdb'))).to.equal(true)
    expect(readdirSync(path.join(dataDir, 'pre-lmdb')).some((f) => f.startsWith('wal-'))).to.equal(true)
  })

  it('creates the lmdb files readable by their owner only', async () => {
    await withEmbeddedDb({ dataDir, engine: 'lmdb' }, (db) => db.collection('c').insertOne({ a: 1 }))
    const folder = path.join(dataDir, 'lmdb')
    expect(statSync(folder).mode & 0o777).to.equal(0o700)
    for (const name of readdirSync(folder)) expect(statSync(path.join(folder, name)).mode & 0o777, name).to.equal(0o600)
    expect(existsSync(path.join(folder, 'data.mdb'))).to.equal(true)
  })
})
