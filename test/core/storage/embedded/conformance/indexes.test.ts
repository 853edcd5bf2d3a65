import { expect } from 'chai'
import type { MongoBulkWriteError } from 'mongodb'
import { rejection, useTestDb, type Loose } from './fixture.ts'

describe('MongoDB conformance: indexes', () => {
  const t = useTestDb('indexes')

  describe('unique indexes', () => {
    it('refuses a duplicate compound key with E11000, keyPattern and keyValue', async () => {
      const events = t.db.collection<Loose>('events_unique')
      await events.createIndex({ project_id: 1, uuid: 1 }, { unique: true, name: 'project_uuid' })
      await events.insertOne({ project_id: 1, uuid: 'u1' })
      await events.insertOne({ project_id: 2, uuid: 'u1' })
      const error = (await rejection(events.insertOne({ project_id: 1, uuid: 'u1' }))) as unknown as {
        code: number
        keyPattern: unknown
        keyValue: unknown
        message: string
      }
      expect(error.code).to.equal(11000)
      expect(error.message).to.include('project_uuid')
      expect(error.keyPattern).to.deep.equal({ project_id: 1, uuid: 1 })
      expect(error.keyValue).to.deep.equal({ project_id: 1, uuid: 'u1' })
    })

    it('lets an unordered insertMany store every event that is not a retry', async () => {
      const events = t.db.collection<Loose>('events_retry')
      await events.createIndex({ project_id: 1, uuid: 1 }, { unique: true })
      await events.insertMany([
        { project_id: 1, uuid: 'a' },
        { project_id: 1, uuid: 'b' },
      ])
      const retry = [
        { project_id: 1, uuid: 'a' },
        { project_id: 1, uuid: 'c' },
        { project_id: 1, uuid: 'b' },
        { project_id: 1, uuid: 'd' },
      ]
      const error = (await rejection(events.insertMany(retry, { ordered: false }))) as unknown as MongoBulkWriteError
      const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors]
      expect(writeErrors.map((e) => [e.index, e.code])).to.deep.equal([
        [0, 11000],
        [2, 11000],
      ])
      expect(error.insertedCount).to.equal(2)
      expect(
        (
          await events
            .find({}, { projection: { _id: 0, uuid: 1 } })
            .sort({ uuid: 1 })
            .toArray()
        ).map((d) => d.uuid),
      ).to.deep.equal(['a', 'b', 'c', 'd'])
    })

    it('refuses an insert whose second unique key is taken, leaving no trace of it in any index', async () => {
      const persons = t.db.collection<Loose>('persons_two_unique')
      await persons.createIndex({ email: 1 }, { unique: true })
      await persons.createIndex({ handle: 1 }, { unique: true })
      await persons.createIndex({ team: 1 })
      await persons.insertOne({ _id: 1 as never, email: 'a@x', handle: 'a', team: 't' })
      const error = (await rejection(
        persons.insertOne({ _id: 2 as never, email: 'b@x', handle: 'a', team: 't' }),
      )) as unknown as { code: number; keyValue: unknown }
      expect([error.code, error.keyValue]).to.deep.equal([11000, { handle: 'a' }])
      expect(await persons.countDocuments()).to.equal(1)
      expect(await persons.find({ email: 'b@x' }).hint({ email: 1 }).toArray()).to.deep.equal([])
      expect(await persons.find({ team: 't' }).hint({ team: 1 }).toArray()).to.have.length(1)
      // the _id and the first unique key are free again
      await persons.insertOne({ _id: 2 as never, email: 'b@x', handle: 'b', team: 't' })
      const team = await persons.find({ team: 't' }).hint({ team: 1 }).toArray()
      expect(team.map((p) => p._id)).to.deep.equal([1, 2])
    })

    it('refuses an update that would duplicate a unique key, leaving the document unchanged', async () => {
      const persons = t.db.collection<Loose>('persons_unique')
      await persons.createIndex({ project_id: 1, distinct_id: 1 }, { unique: true })
      await persons.insertMany([
        { _id: 1, project_id: 1, distinct_id: 'x' },
        { _id: 2, project_id: 1, distinct_id: 'y' },
      ])
      const error = await rejection(persons.updateOne({ _id: 2 }, { $set: { distinct_id: 'x' } }))
      expect(error.code).to.equal(11000)
      expect(await persons.findOne({ _id: 2 })).to.deep.equal({ _id: 2, project_id: 1, distinct_id: 'y' })
    })

    it('treats a missing field as null: two documents without it collide, unless the index is sparse', async () => {
      const plain = t.db.collection<Loose>('unique_missing')
      await plain.createIndex({ token: 1 }, { unique: true })
      await plain.insertOne({ a: 1 })
      expect((await rejection(plain.insertOne({ a: 2 }))).code).to.equal(11000)
      const sparse = t.db.collection<Loose>('unique_sparse')
      await sparse.createIndex({ token: 1 }, { unique: true, sparse: true })
      await sparse.insertMany([{ a: 1 }, { a: 2 }, { token: 't' }])
      expect((await rejection(sparse.insertOne({ token: 't' }))).code).to.equal(11000)
    })

    it('enforces a partial unique index only on the documents it covers', async () => {
      const c = t.db.collection<Loose>('unique_partial')
      await c.createIndex({ email: 1 }, { unique: true, partialFilterExpression: { active: true } })
      await c.insertMany([
        { email: 'e', active: false },
        { email: 'e', active: false },
        { email: 'e', active: true },
      ])
      expect((await rejection(c.insertOne({ email: 'e', active: true }))).code).to.equal(11000)
    })

    it('fails to build over existing duplicates and does not create the index', async () => {
      const c = t.db.collection<Loose>('unique_build')
      await c.insertMany([{ k: 1 }, { k: 1 }])
      expect((await rejection(c.createIndex({ k: 1 }, { unique: true }))).code).to.equal(11000)
      expect((await c.listIndexes().toArray()).map((i) => i.name)).to.deep.equal(['_id_'])
    })
  })

  describe('index management', () => {
    it('lists, re-creates idempotently and drops indexes', async () => {
      const c = t.db.collection<Loose>('manage')
      await c.createIndex({ created_at: 1 }, { expireAfterSeconds: 3600, name: 'ttl' })
      await c.createIndex({ created_at: 1 }, { expireAfterSeconds: 3600, name: 'ttl' })
      await c.createIndexes([{ key: { a: 1, b: -1 } }])
      const listed = await c.listIndexes().toArray()
      expect(listed.map((i) => [i.name, i.key])).to.deep.equal([
        ['_id_', { _id: 1 }],
        ['ttl', { created_at: 1 }],
        ['a_1_b_-1', { a: 1, b: -1 }],
      ])
      expect(listed[1].expireAfterSeconds).to.equal(3600)
      await c.dropIndex('a_1_b_-1')
      expect((await c.listIndexes().toArray()).map((i) => i.name)).to.deep.equal(['_id_', 'ttl'])
    })

    it("changes a TTL index's expireAfterSeconds with collMod (a new retention period)", async () => {
      const c = t.db.collection<Loose>('manage_ttl')
      await c.createIndex({ timestamp: 1 }, { expireAfterSeconds: 3600, name: 'retention' })
      const reply = await t.db.command({
        collMod: 'manage_ttl',
        index: { keyPattern: { timestamp: 1 }, expireAfterSeconds: 60 },
      })
      expect([reply.expireAfterSeconds_old, reply.expireAfterSeconds_new]).to.deep.equal([3600, 60])
      const [, ttl] = await c.listIndexes().toArray()
      expect(ttl.expireAfterSeconds).to.equal(60)
    })

    it('refuses a second index under an existing name with another key', async () => {
      const c = t.db.collection<Loose>('manage_conflict')
      await c.createIndex({ a: 1 }, { name: 'same' })
      expect((await rejection(c.createIndex({ b: 1 }, { name: 'same' }))).code).to.equal(86)
    })

    it('refuses to drop the _id index or an index that does not exist', async () => {
      const c = t.db.collection<Loose>('manage_drop')
      await c.insertOne({ a: 1 })
      expect((await rejection(c.dropIndex('_id_'))).code).to.equal(72)
      expect((await rejection(c.dropIndex('nope'))).code).to.equal(27)
    })
  })

  describe('lookups through indexes', () => {
    before(async () => {
      const persons = t.db.collection<Loose>('lookup_persons')
      await persons.createIndex({ project_id: 1, distinct_id: 1 }, { unique: true, name: 'project_distinct_id' })
      await persons.insertMany(
        Array.from({ length: 2000 }, (_, i) => ({ project_id: i % 4, distinct_id: `user-${i}`, n: i })),
      )
      const events = t.db.collection<Loose>('lookup_events')
      await events.createIndex({ project_id: 1, timestamp: -1 }, { name: 'project_timestamp' })
      await events.insertMany(
        Array.from({ length: 2000 }, (_, i) => ({
          project_id: i % 2,
          timestamp: new Date(Date.UTC(2024, 0, 1) + i * 60_000),
          i,
        })),
      )
    })

    it('finds a person by project and distinct_id through the unique index', async () => {
      const persons = t.db.collection<Loose>('lookup_persons')
      expect((await persons.findOne({ project_id: 1, distinct_id: 'user-1001' }))?.n).to.equal(1001)
      const plan = JSON.stringify(await persons.find({ project_id: 1, distinct_id: 'user-1001' }).explain())
      expect(plan).to.include('project_distinct_id')
      expect(plan).not.to.include('COLLSCAN')
    })

    it('lists the newest events of a project through the (project, timestamp) index', async () => {
      const events = t.db.collection<Loose>('lookup_events')
      const newest = await events.find({ project_id: 1 }).sort({ timestamp: -1 }).limit(3).toArray()
      expect(newest.map((e) => e.i)).to.deep.equal([1999, 1997, 1995])
      const oldest = await events
        .find({ project_id: 0, timestamp: { $gte: new Date(Date.UTC(2024, 0, 1, 0, 10)) } })
        .sort({ timestamp: 1 })
        .limit(2)
        .toArray()
      expect(oldest.map((e) => e.i)).to.deep.equal([10, 12])
      const plan = JSON.stringify(await events.find({ project_id: 1 }).sort({ timestamp: -1 }).limit(3).explain())
      expect(plan).to.include('project_timestamp')
    })

    it("counts a project's documents through the index", async () => {
      const persons = t.db.collection<Loose>('lookup_persons')
      expect(await persons.countDocuments({ project_id: 3 })).to.equal(500)
      expect(
        await persons.countDocuments({ project_id: 3, distinct_id: { $in: ['user-3', 'user-7', 'user-8'] } }),
      ).to.equal(2)
    })

    it('indexes each element of an array field (multikey)', async () => {
      const c = t.db.collection<Loose>('multikey')
      await c.createIndex({ tags: 1 })
      await c.insertMany([{ _id: 1, tags: ['a', 'b'] }, { _id: 2, tags: ['b'] }, { _id: 3, tags: 'a' }, { _id: 4 }])
      expect((await c.find({ tags: 'a' }).sort({ _id: 1 }).toArray()).map((d) => d._id)).to.deep.equal([1, 3])
      expect(
        (
          await c
            .find({ tags: { $in: ['b', 'z'] } })
            .sort({ _id: 1 })
            .toArray()
        ).map((d) => d._id),
      ).to.deep.equal([1, 2])
      expect((await c.find({ tags: null }).toArray()).map((d) => d._id)).to.deep.equal([4])
    })
  })
})
