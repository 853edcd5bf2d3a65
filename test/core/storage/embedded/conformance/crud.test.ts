import { expect } from 'chai'
import { MongoBulkWriteError, ObjectId, type Document } from 'mongodb'
import { rejection, useTestDb, type Loose } from './fixture.ts'

describe('MongoDB conformance: CRUD', () => {
  const t = useTestDb('crud')

  describe('insert', () => {
    it('stores a document and finds it by _id', async () => {
      const c = t.db.collection<Loose>('insert_basic')
      const { insertedId } = await c.insertOne({ name: 'a', n: 1, nested: { x: [1, 2] } })
      const found = await c.findOne({ _id: insertedId })
      expect(found).to.deep.equal({ _id: insertedId, name: 'a', n: 1, nested: { x: [1, 2] } })
    })

    it('makes an ObjectId _id, as the first field, when the client sends none', async () => {
      await t.db.command({ insert: 'insert_noid', documents: [{ a: 1 }] })
      const [doc] = await t.db.collection<Loose>('insert_noid').find().toArray()
      expect(Object.keys(doc)).to.deep.equal(['_id', 'a'])
      expect(doc._id).to.be.instanceOf(ObjectId)
    })

    it('moves _id to the front of a stored document', async () => {
      await t.db.command({ insert: 'insert_idlast', documents: [{ a: 1, _id: 7 }] })
      const doc = await t.db.collection<Loose>('insert_idlast').findOne({ _id: 7 })
      expect(Object.keys(doc ?? {})).to.deep.equal(['_id', 'a'])
    })

    it('refuses a duplicate _id with E11000 and keeps the first document', async () => {
      const c = t.db.collection<Loose>('insert_dup')
      await c.insertOne({ _id: 'x', v: 1 })
      const error = await rejection(c.insertOne({ _id: 'x', v: 2 }))
      expect(error.code).to.equal(11000)
      expect(error.message).to.match(/E11000 duplicate key error/)
      expect(await c.findOne({ _id: 'x' })).to.deep.equal({ _id: 'x', v: 1 })
    })

    it('stops an ordered insertMany at the first duplicate', async () => {
      const c = t.db.collection<Loose>('insert_ordered')
      const error = (await rejection(
        c.insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }]),
      )) as unknown as MongoBulkWriteError
      expect(error).to.be.instanceOf(MongoBulkWriteError)
      expect(error.insertedCount).to.equal(1)
      expect(error.writeErrors).to.have.length(1)
      expect(await c.countDocuments()).to.equal(1)
    })

    it('continues an unordered insertMany past duplicates and reports each one', async () => {
      const c = t.db.collection<Loose>('insert_unordered')
      const error = (await rejection(
        c.insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }, { _id: 2 }, { _id: 3 }], { ordered: false }),
      )) as unknown as MongoBulkWriteError
      expect(error.insertedCount).to.equal(3)
      const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors]
      expect(writeErrors.map((e) => [e.index, e.code])).to.deep.equal([
        [1, 11000],
        [3, 11000],
      ])
      expect(await c.countDocuments()).to.equal(3)
    })
  })

  describe('find', () => {
    before(async () => {
      const docs = Array.from({ length: 250 }, (_, i) => ({
        _id: i,
        group: i % 5,
        label: `item-${String(i).padStart(3, '0')}`,
        tags: i % 2 ? ['odd'] : ['even'],
      }))
      await t.db.collection<Loose>('find_many').insertMany(docs)
    })

    it('filters, sorts, skips, limits and projects', async () => {
      const docs = await t.db
        .collection<Loose>('find_many')
        .find({ group: 3, _id: { $gte: 100 } }, { projection: { label: 1, _id: 0 } })
        .sort({ _id: -1 })
        .skip(2)
        .limit(3)
        .toArray()
      expect(docs).to.deep.equal([{ label: 'item-238' }, { label: 'item-233' }, { label: 'item-228' }])
    })

    it('projects _id alone as an inclusion, and with an exclusion as one', async () => {
      const c = t.db.collection<Loose>('find_many')
      expect(await c.find({ _id: 7 }, { projection: { _id: 1 } }).toArray()).to.deep.equal([{ _id: 7 }])
      expect(await c.find({ _id: 7 }, { projection: { _id: true } }).toArray()).to.deep.equal([{ _id: 7 }])
      expect(await c.find({ _id: 7 }, { projection: { _id: 0 } }).toArray()).to.deep.equal([
        { group: 2, label: 'item-007', tags: ['odd'] },
      ])
      expect(await c.find({ _id: 7 }, { projection: { _id: 1, tags: 0 } }).toArray()).to.deep.equal([
        { _id: 7, group: 2, label: 'item-007' },
      ])
    })

    it('returns every document through getMore batches', async () => {
      const cursor = t.db.collection<Loose>('find_many').find({}, { batchSize: 17 }).sort({ _id: 1 })
      const ids: number[] = []
      for await (const doc of cursor) ids.push(doc._id as unknown as number)
      expect(ids).to.deep.equal(Array.from({ length: 250 }, (_, i) => i))
    })

    it('matches array elements, $in, $exists, $regex and $or', async () => {
      const c = t.db.collection<Loose>('find_many')
      expect(await c.countDocuments({ tags: 'odd' })).to.equal(125)
      expect(await c.countDocuments({ group: { $in: [1, 2] } })).to.equal(100)
      expect(await c.countDocuments({ missing: { $exists: false } })).to.equal(250)
      expect(await c.countDocuments({ label: { $regex: /^item-24/ } })).to.equal(10)
      expect(await c.countDocuments({ $or: [{ _id: 1 }, { _id: 2 }, { group: 99 }] })).to.equal(2)
    })

    it('closes a cursor the client stops reading (killCursors)', async () => {
      const cursor = t.db.collection<Loose>('find_many').find({}, { batchSize: 10 })
      await cursor.next()
      const id = cursor.id
      await cursor.close()
      expect(cursor.killed).to.equal(true)
      const error = await rejection(t.db.command({ getMore: id, collection: 'find_many' }))
      expect(error.code).to.equal(43)
    })

    it('answers distinct and estimatedDocumentCount', async () => {
      const c = t.db.collection<Loose>('find_many')
      expect((await c.distinct('group')).sort()).to.deep.equal([0, 1, 2, 3, 4])
      expect((await c.distinct('tags', { group: 0 })).sort()).to.deep.equal(['even', 'odd'])
      expect(await c.estimatedDocumentCount()).to.equal(250)
    })

    it('counts a whole collection with skip and limit (the count command without a query)', async () => {
      const count = (extra: object) => t.db.command({ count: 'find_many', ...extra })
      expect((await count({})).n).to.equal(250)
      expect((await count({ skip: 240 })).n).to.equal(10)
      expect((await count({ skip: 300 })).n).to.equal(0)
      expect((await count({ limit: 7 })).n).to.equal(7)
      expect((await count({ skip: 245, limit: 7 })).n).to.equal(5)
      expect((await t.db.command({ count: 'find_nothing_here' })).n).to.equal(0)
    })

    it('finds nothing in a collection that does not exist', async () => {
      expect(await t.db.collection<Loose>('find_nothing_here').find({ a: 1 }).toArray()).to.deep.equal([])
      expect(await t.db.collection<Loose>('find_nothing_here').countDocuments()).to.equal(0)
    })
  })

  describe('update and delete', () => {
    it('applies operators to one or many documents', async () => {
      const c = t.db.collection<Loose>('upd_ops')
      await c.insertMany([
        { _id: 1, n: 1, tags: ['a'] },
        { _id: 2, n: 2, tags: [] },
        { _id: 3, n: 3, tags: [] },
      ])
      const update: Document = { $inc: { n: 10 }, $push: { tags: 'b' }, $set: { 'deep.x': true } }
      const one = await c.updateOne({ _id: 1 }, update)
      expect([one.matchedCount, one.modifiedCount]).to.deep.equal([1, 1])
      const many = await c.updateMany({ n: { $gte: 2 } }, { $set: { big: true }, $unset: { tags: '' } })
      expect([many.matchedCount, many.modifiedCount]).to.deep.equal([3, 3])
      expect(await c.findOne({ _id: 1 })).to.deep.equal({ _id: 1, n: 11, deep: { x: true }, big: true })
    })

    it('updates array elements by position, by array filter and with array operators', async () => {
      const c = t.db.collection<Loose>('upd_arrays')
      await c.insertOne({
        _id: 1,
        items: [
          { sku: 'a', qty: 1 },
          { sku: 'b', qty: 2 },
          { sku: 'c', qty: 3 },
        ],
        tags: ['x', 'y'],
        lo: 5,
        hi: 5,
        old: 1,
      })
      await c.updateOne({ _id: 1, 'items.sku': 'b' }, { $set: { 'items.$.qty': 20 } })
      await c.updateOne(
        { _id: 1 },
        { $inc: { 'items.$[big].qty': 100 } },
        { arrayFilters: [{ 'big.qty': { $gte: 3 } }] },
      )
      const arrays: Document = {
        $addToSet: { tags: { $each: ['y', 'z'] } },
        $pop: { items: -1 },
        $min: { lo: 2 },
        $max: { hi: 9 },
        $rename: { old: 'renamed' },
      }
      await c.updateOne({ _id: 1 }, arrays)
      const pull: Document = { $pull: { tags: 'x' } }
      await c.updateOne({ _id: 1 }, pull)
      expect(await c.findOne({ _id: 1 })).to.deep.equal({
        _id: 1,
        items: [
          { sku: 'b', qty: 120 },
          { sku: 'c', qty: 103 },
        ],
        tags: ['y', 'z'],
        lo: 2,
        hi: 9,
        renamed: 1,
      })
    })

    it('sets the current date with $currentDate', async () => {
      const c = t.db.collection<Loose>('upd_date')
      await c.insertOne({ _id: 1 })
      const before = Date.now()
      await c.updateOne({ _id: 1 }, { $currentDate: { at: true } })
      const first = (await c.findOne({ _id: 1 }))?.at as Date
      await new Promise((resolve) => setTimeout(resolve, 20))
      await c.updateOne({ _id: 1 }, { $currentDate: { at: { $type: 'date' } } })
      const second = (await c.findOne({ _id: 1 }))?.at as Date
      expect(first).to.be.instanceOf(Date)
      expect(first.getTime()).to.be.within(before - 1000, Date.now())
      expect(second.getTime()).to.be.above(first.getTime())
    })

    it('reports a matched but unchanged document as not modified', async () => {
      const c = t.db.collection<Loose>('upd_noop')
      await c.insertOne({ _id: 1, v: 1 })
      const result = await c.updateOne({ _id: 1 }, { $set: { v: 1 } })
      expect([result.matchedCount, result.modifiedCount]).to.deep.equal([1, 0])
    })

    it('upserts from the filter equalities, $setOnInsert applying on insert only', async () => {
      const c = t.db.collection<Loose>('upd_upsert')
      const first = await c.updateOne(
        { key: 'k', 'meta.kind': 'x', n: { $gt: 5 } },
        { $setOnInsert: { created: 1 }, $inc: { hits: 1 } },
        { upsert: true },
      )
      expect(first.upsertedCount).to.equal(1)
      await c.updateOne({ key: 'k' }, { $setOnInsert: { created: 2 }, $inc: { hits: 1 } }, { upsert: true })
      const doc = await c.findOne({ key: 'k' }, { projection: { _id: 0 } })
      expect(doc).to.deep.equal({ key: 'k', meta: { kind: 'x' }, created: 1, hits: 2 })
    })

    it('takes the upserted _id from the filter or from $setOnInsert', async () => {
      const c = t.db.collection<Loose>('upd_upsert_id')
      const a = await c.updateOne({ _id: 'from-filter' }, { $set: { v: 1 } }, { upsert: true })
      expect(a.upsertedId).to.equal('from-filter')
      const b = await c.updateOne({ v: 2 }, { $setOnInsert: { _id: 'from-setOnInsert' } }, { upsert: true })
      expect(b.upsertedId).to.equal('from-setOnInsert')
    })

    it('replaces a whole document, keeping its _id', async () => {
      const c = t.db.collection<Loose>('upd_replace')
      const { insertedId } = await c.insertOne({ a: 1, b: 2 })
      await c.replaceOne({ _id: insertedId }, { c: 3 })
      expect(await c.findOne({ _id: insertedId })).to.deep.equal({ _id: insertedId, c: 3 })
    })

    it('supports optimistic concurrency with a version in the filter', async () => {
      const c = t.db.collection<Loose>('upd_version')
      const { insertedId } = await c.insertOne({ version: 1, props: { a: 1 } })
      const won = await c.updateOne({ _id: insertedId, version: 1 }, { $set: { props: { a: 2 }, version: 2 } })
      const lost = await c.updateOne({ _id: insertedId, version: 1 }, { $set: { props: { a: 3 }, version: 2 } })
      expect([won.modifiedCount, lost.matchedCount]).to.deep.equal([1, 0])
      expect((await c.findOne({ _id: insertedId }))?.props).to.deep.equal({ a: 2 })
    })

    it('findOneAndUpdate returns the document before or after, and upserts', async () => {
      const c = t.db.collection<Loose>('fam')
      await c.insertOne({ _id: 1, n: 1 })
      const before = await c.findOneAndUpdate({ _id: 1 }, { $inc: { n: 1 } })
      const after = await c.findOneAndUpdate(
        { _id: 1 },
        { $inc: { n: 1 } },
        { returnDocument: 'after', projection: { n: 1, _id: 0 } },
      )
      const upserted = await c.findOneAndUpdate(
        { _id: 2 },
        { $set: { n: 9 } },
        { upsert: true, returnDocument: 'after' },
      )
      const missing = await c.findOneAndUpdate({ _id: 3 }, { $set: { n: 9 } })
      expect([before, after, upserted, missing]).to.deep.equal([{ _id: 1, n: 1 }, { n: 3 }, { _id: 2, n: 9 }, null])
    })

    it('applies the projection on every find-and-modify path, with a sort, before and after', async () => {
      const c = t.db.collection<Loose>('fam_projection')
      await c.createIndex({ n: 1 })
      await c.insertMany([
        { _id: 1, a: 1, b: { x: 1, y: 2 }, n: 1 },
        { _id: 2, a: 1, b: { x: 3, y: 4 }, n: 2 },
      ])
      const sort = { n: -1 } as const
      expect(
        await c.findOneAndUpdate(
          { a: 1 },
          { $set: { z: 1 } },
          { sort, projection: { 'b.x': 1 }, returnDocument: 'after' },
        ),
      ).to.deep.equal({ _id: 2, b: { x: 3 } })
      expect(
        await c.findOneAndUpdate({ a: 1 }, [{ $set: { z: 2 } }], { sort, projection: { b: 0, a: 0 } }),
      ).to.deep.equal({ _id: 2, n: 2, z: 1 })
      expect(
        await c.findOneAndReplace({ a: 1 }, { a: 1, b: { x: 9, y: 9 }, n: 0 }, { sort, projection: { _id: 0, n: 1 } }),
      ).to.deep.equal({ n: 2 })
      expect(
        await c.findOneAndReplace(
          { a: 1 },
          { a: 1, n: 5 },
          { sort: { n: 1 }, projection: { n: 1 }, returnDocument: 'after' },
        ),
      ).to.deep.equal({ _id: 2, n: 5 })
      expect(
        await c.findOneAndUpdate(
          { a: 7 },
          { $set: { n: 7, b: { x: 5, y: 6 } } },
          { sort, projection: { _id: 0, 'b.y': 1 }, upsert: true, returnDocument: 'after' },
        ),
      ).to.deep.equal({ b: { y: 6 } })
      expect(await c.findOneAndDelete({ a: 1 }, { sort, projection: { n: 1, _id: 0 } })).to.deep.equal({ n: 5 })
    })

    it('findOneAndDelete removes the first document in sort order', async () => {
      const c = t.db.collection<Loose>('fad')
      await c.insertMany([
        { _id: 1, p: 5 },
        { _id: 2, p: 9 },
        { _id: 3, p: 7 },
      ])
      const removed = await c.findOneAndDelete({}, { sort: { p: -1 } })
      expect(removed).to.deep.equal({ _id: 2, p: 9 })
      expect(await c.countDocuments()).to.equal(2)
    })

    it('deletes one or many documents', async () => {
      const c = t.db.collection<Loose>('del')
      await c.insertMany([{ k: 1 }, { k: 1 }, { k: 1 }, { k: 2 }])
      expect((await c.deleteOne({ k: 1 })).deletedCount).to.equal(1)
      expect((await c.deleteMany({ k: 1 })).deletedCount).to.equal(2)
      expect(await c.countDocuments()).to.equal(1)
    })

    it('runs mixed bulk writes, unordered ones past their failures', async () => {
      const c = t.db.collection<Loose>('bulk')
      await c.insertOne({ _id: 1 })
      const error = (await rejection(
        c.bulkWrite(
          [
            { insertOne: { document: { _id: 1 } } },
            { updateOne: { filter: { _id: 1 }, update: { $set: { v: 1 } } } },
            { insertOne: { document: { _id: 2 } } },
            { deleteOne: { filter: { _id: 2 } } },
            { updateOne: { filter: { _id: 3 }, update: { $set: { v: 3 } }, upsert: true } },
          ],
          { ordered: false },
        ),
      )) as unknown as MongoBulkWriteError
      expect(error.result.insertedCount).to.equal(1)
      expect(error.result.modifiedCount).to.equal(1)
      expect(error.result.deletedCount).to.equal(1)
      expect(error.result.upsertedCount).to.equal(1)
      expect(await c.find().sort({ _id: 1 }).toArray()).to.deep.equal([
        { _id: 1, v: 1 },
        { _id: 3, v: 3 },
      ])
    })
  })

  describe('collections', () => {
    it('creates, lists, renames and drops collections', async () => {
      await t.db.createCollection('ns_a')
      expect((await rejection(t.db.createCollection('ns_a'))).code).to.equal(48)
      await t.db.collection<Loose>('ns_a').insertOne({ x: 1 })
      await t.db.renameCollection('ns_a', 'ns_b')
      const names = (await t.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name)
      expect(names).to.include('ns_b').and.not.include('ns_a')
      expect(await t.db.collection<Loose>('ns_b').countDocuments()).to.equal(1)
      expect(await t.db.collection<Loose>('ns_b').drop()).to.equal(true)
      expect(await t.db.collection<Loose>('ns_b').countDocuments()).to.equal(0)
    })
  })
})
