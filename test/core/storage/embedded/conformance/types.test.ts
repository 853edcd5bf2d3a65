import { expect } from 'chai'
import { Binary, Decimal128, Double, Int32, Long, MongoClient, ObjectId, UUID } from 'mongodb'
import { testMongoUrl } from '../../../../helpers/mongo.ts'
import { useTestDb, type Loose } from './fixture.ts'

const RAW = { promoteValues: false, promoteLongs: false } as const

describe('MongoDB conformance: BSON types', () => {
  const t = useTestDb('types')
  const coll = () => t.db.collection<Loose>('values')

  it('returns int32, int64 and double values with the type they were written with', async () => {
    await coll().insertOne({
      _id: 'numbers',
      i: new Int32(1),
      l: Long.fromNumber(2),
      d: new Double(3),
      f: 1.5,
      big: Long.fromString('9007199254740993'),
    })
    const doc = await coll().findOne({ _id: 'numbers' }, RAW)
    expect(doc?.i).to.be.instanceOf(Int32)
    expect(doc?.l).to.be.instanceOf(Long)
    expect(doc?.d).to.be.instanceOf(Double)
    expect(doc?.f).to.be.instanceOf(Double)
    expect(String(doc?.big)).to.equal('9007199254740993')
  })

  it('keeps the types of projected fields', async () => {
    await coll().insertOne({ _id: 'projected', l: Long.fromNumber(7), d: new Double(1), other: 1 })
    const doc = await coll().findOne({ _id: 'projected' }, { ...RAW, projection: { l: 1, d: 1, _id: 0 } })
    expect(doc?.l).to.be.instanceOf(Long)
    expect(doc?.d).to.be.instanceOf(Double)
    expect(Object.keys(doc ?? {})).to.deep.equal(['l', 'd'])
  })

  it('keeps int64 and double types through $inc, $mul and $set', async () => {
    await coll().insertOne({ _id: 'arith', l: Long.fromNumber(2), d: new Double(3), i: 4, keep: Long.fromNumber(7) })
    await coll().updateOne(
      { _id: 'arith' },
      { $inc: { l: 1, d: 1 }, $mul: { i: new Double(2) }, $set: { s: Long.fromNumber(9) } },
    )
    const doc = await coll().findOne({ _id: 'arith' }, RAW)
    expect(doc?.l).to.be.instanceOf(Long)
    expect(Number(doc?.l)).to.equal(3)
    expect(doc?.d).to.be.instanceOf(Double)
    expect(Number(doc?.d)).to.equal(4)
    expect(doc?.i).to.be.instanceOf(Double)
    expect(doc?.keep).to.be.instanceOf(Long)
    expect(doc?.s).to.be.instanceOf(Long)
  })

  it('round-trips bigint as int64 for a client using useBigInt64', async () => {
    const client = new MongoClient(await testMongoUrl(), { useBigInt64: true })
    try {
      const c = client.db(t.db.databaseName).collection<Loose>('values')
      await c.insertOne({ _id: 'bigint', n: 5n, huge: 2n ** 62n })
      const doc = await c.findOne({ _id: 'bigint' })
      expect(doc?.n).to.equal(5n)
      expect(doc?.huge).to.equal(2n ** 62n)
    } finally {
      await client.close()
    }
  })

  it('compares numbers by value whatever their type', async () => {
    await coll().insertMany([
      { _id: 'n1', group: 'cmp', v: new Int32(10) },
      { _id: 'n2', group: 'cmp', v: Long.fromNumber(20) },
      { _id: 'n3', group: 'cmp', v: new Double(15.5) },
    ])
    expect(
      (
        await coll()
          .find({ group: 'cmp', v: { $gt: 12 } })
          .sort({ v: 1 })
          .toArray()
      ).map((d) => d._id),
    ).to.deep.equal(['n3', 'n2'])
    expect((await coll().findOne({ group: 'cmp', v: 20 }))?._id).to.equal('n2')
  })

  it('round-trips dates, ObjectIds, binaries, UUIDs, decimals, nulls and nested arrays', async () => {
    const value = {
      _id: 'misc',
      at: new Date('2024-05-06T07:08:09.123Z'),
      oid: new ObjectId(),
      bin: new Binary(Buffer.from([1, 2, 3])),
      uuid: new UUID(),
      dec: Decimal128.fromString('1.10'),
      nothing: null,
      flags: [true, false],
      grid: [
        [1, 2],
        [3, [4]],
      ],
      empty: {},
    }
    await coll().insertOne(value)
    const doc = await coll().findOne({ _id: 'misc' })
    expect(doc?.at).to.deep.equal(value.at)
    expect(String(doc?.oid)).to.equal(String(value.oid))
    expect(Buffer.from((doc!.bin as Binary).buffer).equals(Buffer.from([1, 2, 3]))).to.equal(true)
    expect((doc!.uuid as Binary).sub_type).to.equal(4)
    expect(String(doc?.dec)).to.equal('1.10')
    expect([doc?.nothing, doc?.flags, doc?.grid, doc?.empty]).to.deep.equal([
      null,
      [true, false],
      [
        [1, 2],
        [3, [4]],
      ],
      {},
    ])
  })

  it('finds documents by Date ranges and ObjectId equality', async () => {
    const oid = new ObjectId()
    await coll().insertMany([
      { _id: 'd1', group: 'dates', at: new Date('2024-01-01'), ref: oid },
      { _id: 'd2', group: 'dates', at: new Date('2024-02-01'), ref: new ObjectId() },
    ])
    expect(
      (
        await coll()
          .find({ group: 'dates', at: { $gte: new Date('2024-01-15') } })
          .toArray()
      ).map((d) => d._id),
    ).to.deep.equal(['d2'])
    expect((await coll().findOne({ ref: oid }))?._id).to.equal('d1')
  })
})
