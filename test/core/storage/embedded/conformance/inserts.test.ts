import { expect } from 'chai'
import { Double, Int32, Long, MongoBulkWriteError, ObjectId } from 'mongodb'
import { rejection, useTestDb, type Loose } from './fixture.ts'

/** The indexes of the failed inserts of an unordered insertMany, each failed as a duplicate key. */
async function failedIndexes(promise: Promise<unknown>): Promise<number[]> {
  const error = await rejection(promise)
  expect(error).to.be.instanceOf(MongoBulkWriteError)
  const errors = (error as MongoBulkWriteError).writeErrors
  return (Array.isArray(errors) ? errors : [errors]).map((e) => {
    expect(e.code).to.equal(11000)
    return e.index
  })
}

describe('MongoDB conformance: inserts into indexed collections', () => {
  const t = useTestDb('inserts')

  it('keys each inserted value by its BSON value: equal values of other types collide in a unique index', async () => {
    const coll = t.db.collection<Loose>('typed')
    await coll.createIndex({ v: 1 }, { unique: true })
    const date = new Date('2026-01-02T03:04:05.678Z')
    const id = new ObjectId()
    const docs: Loose[] = [
      { v: 5 },
      { v: 'é\u{1f600}' },
      { v: date },
      { v: id },
      { v: true },
      { v: 0 },
      { v: Long.fromString('9007199254740993') },
      {},
      // each of these holds a key taken above
      { v: new Int32(5) },
      { v: Long.fromNumber(5) },
      { v: new Double(5) },
      { v: 'é\u{1f600}' },
      { v: new Date(date.getTime()) },
      { v: new ObjectId(id.toHexString()) },
      { v: true },
      { v: new Double(-0) },
      { v: null },
    ]
    const failed = await failedIndexes(coll.insertMany(docs, { ordered: false }))
    expect(failed).to.deep.equal([8, 9, 10, 11, 12, 13, 14, 15, 16])
    expect(await coll.countDocuments()).to.equal(8)
    expect(await coll.findOne({ v: Long.fromString('9007199254740993') }, { hint: { v: 1 } })).to.not.equal(null)
  })

  it('indexes nested paths and arrays of an inserted document', async () => {
    const coll = t.db.collection<Loose>('nested')
    await coll.createIndex({ 'a.b': 1 })
    await coll.insertMany([
      { _id: 1, a: { b: 1 } },
      { _id: 2, a: [{ b: 2 }, { b: 3 }] },
      { _id: 3, a: 'x' },
      { _id: 4 },
    ])
    const at = async (b: number) => (await coll.find({ 'a.b': b }, { hint: { 'a.b': 1 } }).toArray()).map((d) => d._id)
    expect(await at(1)).to.deep.equal([1])
    expect(await at(3)).to.deep.equal([2])
    await t.db.collection('parallel').createIndex({ a: 1, b: 1 })
    const refused = await rejection(t.db.collection('parallel').insertOne({ a: [1, 2], b: [3, 4] }))
    expect(refused.code).to.equal(171)
  })

  it('reports duplicates of a compound unique key on objects within one batch, storing the rest with _id first', async () => {
    const coll = t.db.collection<Loose>('compound')
    await coll.createIndex({ 'p.q': 1, r: 1 }, { unique: true })
    const docs: Loose[] = [
      { r: 1, p: { q: [1] }, _id: 'a' },
      { r: 1, p: { q: [1] }, _id: 'b' },
      { r: 2, p: { q: [1] }, _id: 'c' },
      { _id: 'd', p: { q: 1 }, r: 1 },
    ]
    expect(await failedIndexes(coll.insertMany(docs, { ordered: false }))).to.deep.equal([1, 3])
    const stored = await coll.find().sort({ _id: 1 }).toArray()
    expect(stored.map((d) => d._id)).to.deep.equal(['a', 'c'])
    expect(Object.keys(stored[0])).to.deep.equal(['_id', 'r', 'p'])
  })

  it('checks the keys of indexes made or dropped after the first inserts', async () => {
    const coll = t.db.collection<Loose>('later')
    await coll.insertMany([{ k: 1 }, { k: 2 }])
    await coll.createIndex({ k: 1 }, { unique: true })
    expect((await rejection(coll.insertOne({ k: 1 }))).code).to.equal(11000)
    await coll.createIndex({ j: 1 }, { unique: true, sparse: true })
    await coll.insertOne({ k: 3, j: 1 })
    expect((await rejection(coll.insertOne({ k: 4, j: 1 }))).code).to.equal(11000)
    await coll.dropIndex('k_1')
    await coll.insertOne({ k: 1, j: 2 })
    expect(await coll.countDocuments({ k: 1 })).to.equal(2)
  })

  it('refuses an _id that is an array, a regex or an object with $-prefixed fields', async () => {
    const coll = t.db.collection('ids')
    const array = await rejection(coll.insertOne({ _id: [1, 2] as unknown as ObjectId }))
    expect(array).to.include({ code: 2 })
    expect(array.message).to.include("can't use an array for _id")
    const regex = await rejection(coll.insertOne({ _id: /x/ as unknown as ObjectId }))
    expect(regex).to.include({ code: 2 })
    expect(regex.message).to.include("can't use a regex for _id")
    const dollar = await rejection(coll.insertOne({ _id: { $x: 1 } as unknown as ObjectId }))
    expect(dollar).to.include({ code: 52 })
    expect(dollar.message).to.include("_id fields may not contain '$'-prefixed fields")
    expect(await coll.countDocuments()).to.equal(0)
  })
})
