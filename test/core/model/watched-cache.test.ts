import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import type { Db, Document } from 'mongodb'
import { DocumentCache } from '../../../core/model/watched-cache.ts'
import type { CachedRead } from '../../../core/plugin-api.ts'
import { startEmbeddedMongo } from '../../../core/storage/embedded/index.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'

const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 5_000) => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

type Properties = Record<string, unknown>

/** The cache over a real collection of persons, with a load that reads it and counts its reads. */
function cacheOver(db: Db, limit?: number) {
  const persons = db.collection('persons')
  const cache = new DocumentCache<Properties>(persons, { limit })
  let loads = 0
  const load = (id: string) => async (): Promise<CachedRead<Properties> | undefined> => {
    loads++
    const row = await persons.findOne({ project_id: 1, id })
    return row ? { value: row.properties as Properties, documentId: row._id } : undefined
  }
  const read = (id: string) => cache.read(id, load(id))
  return { cache, persons, read, load, loads: () => loads }
}

const person = (id: string, properties: Record<string, unknown>) => ({
  project_id: 1,
  id,
  properties,
  is_identified: false,
  created_at: new Date(0),
  version: 0,
})

/** The cache over a collection holding person p ({plan: 'free'}) once it serves; with `keep`, holding p too. */
async function serving(db: Db, keep = true) {
  const t = cacheOver(db)
  await t.persons.insertOne(person('p', { plan: 'free' }))
  await t.read('p')
  await until('the stream', () => t.cache.live)
  if (keep) await t.read('p')
  return t
}

describe('core: the watched cache of flags reads (DocumentCache)', function () {
  this.timeout(30_000)
  let client: MongoClient
  let other: MongoClient
  let db: Db
  before(async () => {
    client = await MongoClient.connect(await testMongoUrl())
    other = await MongoClient.connect(await testMongoUrl()) // another process's writes
  })
  beforeEach(() => {
    db = client.db(testDbName('watched-cache'))
  })
  afterEach(() => db.dropDatabase())
  after(async () => {
    await client.close()
    await other.close()
  })

  it('answers a person it read again without reading it, once its change stream is open', async () => {
    const t = await serving(db, false)
    expect(await t.read('p')).to.deep.equal({ plan: 'free' })
    const before = t.loads()
    for (let i = 0; i < 5; i++) expect(await t.read('p')).to.deep.equal({ plan: 'free' })
    expect(t.loads()).to.equal(before)
    t.cache.close()
  })

  it("sees another process's update, replace and delete once its change arrives", async () => {
    const t = await serving(db)
    const elsewhere = other.db(db.databaseName).collection('persons')
    await elsewhere.updateOne({ project_id: 1, id: 'p' }, { $set: { 'properties.plan': 'pro' } })
    await until('the update', async () => (await t.read('p'))?.plan === 'pro')
    await elsewhere.replaceOne({ project_id: 1, id: 'p' }, person('p', { plan: 'team' }))
    await until('the replace', async () => (await t.read('p'))?.plan === 'team')
    await elsewhere.deleteOne({ project_id: 1, id: 'p' })
    await until('the delete', async () => (await t.read('p')) === undefined)
    t.cache.close()
  })

  it("reads again at once after this process's own write (changed), before its change arrives", async () => {
    const t = await serving(db)
    await t.persons.updateOne({ project_id: 1, id: 'p' }, { $set: { 'properties.plan': 'pro' } })
    t.cache.changed('p')
    expect(await t.read('p')).to.deep.equal({ plan: 'pro' })
    t.cache.close()
  })

  it('does not keep a read during which its person changed (it may hold the version before)', async () => {
    const t = await serving(db, false)
    const elsewhere = other.db(db.databaseName).collection('persons')
    const stale = await t.load('p')()
    // a read whose find answered before a change the stream reports while it is still in flight
    const answered = await t.cache.read('p', async () => {
      await elsewhere.updateOne({ project_id: 1, id: 'p' }, { $set: { 'properties.plan': 'pro' } })
      await new Promise((resolve) => setTimeout(resolve, 300))
      return stale
    })
    expect(answered).to.deep.equal({ plan: 'free' })
    expect(await t.read('p')).to.deep.equal({ plan: 'pro' })
    // the same with this process's own write (evicted first, so that the read loads)
    t.cache.changed('p')
    const before = await t.load('p')()
    await t.cache.read('p', async () => {
      t.cache.changed('p')
      return before
    })
    const loads = t.loads()
    await t.read('p')
    expect(t.loads()).to.equal(loads + 1)
    t.cache.close()
  })

  it('empties itself when the collection is dropped, and serves again from a new stream', async () => {
    const t = await serving(db)
    await t.persons.drop()
    await until('the drop', () => !t.cache.live)
    expect(await t.read('p')).to.equal(undefined)
    await t.persons.insertOne(person('p', { plan: 'new' }))
    await until('the new person', async () => (await t.read('p'))?.plan === 'new')
    await until('the new stream', () => t.cache.live)
    t.cache.close()
  })

  it('tells apart documents whose _id differ only in BSON type (1 and "1")', async () => {
    const t = cacheOver(db)
    const elsewhere = other.db(db.databaseName).collection('persons')
    await t.persons.insertMany([
      { ...person('a', { plan: 'free' }), _id: 1 },
      { ...person('b', { plan: 'free' }), _id: '1' },
    ] as Document[])
    await t.read('a')
    await until('the stream', () => t.cache.live)
    await t.read('a')
    await t.read('b')
    await elsewhere.updateOne({ _id: 1 } as Document, { $set: { 'properties.plan': 'pro' } })
    await until('the update of a', async () => (await t.read('a'))?.plan === 'pro')
    expect(await t.read('b')).to.deep.equal({ plan: 'free' })
    t.cache.close()
  })

  it('keeps a key not found until any document is inserted', async () => {
    const t = cacheOver(db)
    const elsewhere = other.db(db.databaseName).collection('persons')
    await t.read('absent')
    await until('the stream', () => t.cache.live)
    expect(await t.read('absent')).to.equal(undefined)
    const loads = t.loads()
    expect(await t.read('absent')).to.equal(undefined)
    expect(t.loads()).to.equal(loads)
    await elsewhere.insertOne(person('absent', { plan: 'new' }))
    await until('the insert', async () => (await t.read('absent'))?.plan === 'new')
    t.cache.close()
  })

  it('keeps at most its limit: at the limit it empties and fills again', async () => {
    const t = cacheOver(db, 3)
    await t.persons.insertMany(['a', 'b', 'c', 'd'].map((id) => person(id, { id })))
    await t.read('a')
    await until('the stream', () => t.cache.live)
    for (const id of ['a', 'b', 'c']) await t.read(id)
    let loads = t.loads()
    for (const id of ['a', 'b', 'c']) await t.read(id)
    expect(t.loads()).to.equal(loads)
    await t.read('d') // the fourth: emptied, then d kept
    loads = t.loads()
    await t.read('a')
    await t.read('d')
    expect(t.loads()).to.equal(loads + 1)
    t.cache.close()
  })

  it('keeps nothing without change streams (a standalone server): every read is a read', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-standalone-'))
    const server = await startEmbeddedMongo({ dataDir })
    const standalone = await MongoClient.connect(server.url)
    try {
      const unavailable: Error[] = []
      const persons = standalone.db('standalone').collection('persons')
      const cache = new DocumentCache<Properties>(persons, { onUnavailable: (error) => unavailable.push(error) })
      await persons.insertOne(person('p', { plan: 'free' }))
      let loads = 0
      const load = async () => {
        loads++
        const row = await persons.findOne({ id: 'p' })
        return row ? { value: row.properties as Properties, documentId: row._id } : undefined
      }
      for (let i = 0; i < 5; i++) {
        expect(await cache.read('p', load)).to.deep.equal({ plan: 'free' })
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(loads).to.equal(5)
      expect(cache.live).to.equal(false)
      expect(unavailable).to.have.length(1) // told once
      cache.close()
    } finally {
      await standalone.close()
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
