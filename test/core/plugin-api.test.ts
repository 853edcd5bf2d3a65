import { expect } from 'chai'
import { MongoBulkWriteError, MongoClient } from 'mongodb'
import { copyRecord, isDuplicateKey, withFields } from '../../core/plugin-api.ts'
import { testDbName, testMongoUrl } from '../helpers/mongo.ts'

describe('plugin-api: the cheap copies of events and records', () => {
  it('withFields is a spread: the same keys and values, the source untouched', () => {
    const source = { a: 1, b: 2 }
    const made = withFields<Record<string, number>>(source, { b: 3, c: 4 })
    expect(made).to.deep.equal({ a: 1, b: 3, c: 4 })
    expect(source).to.deep.equal({ a: 1, b: 2 })
  })

  it('copyRecord keeps the key order and keeps a __proto__ key as an own property, as a spread does', () => {
    const source = JSON.parse('{"b":1,"__proto__":{"polluted":true},"a":2}') as Record<string, unknown>
    const copy = copyRecord(source)
    expect(Object.keys(copy)).to.deep.equal(['b', '__proto__', 'a'])
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype)
    expect((copy as { polluted?: unknown }).polluted).to.equal(undefined)
    expect(copy).to.deep.equal({ ...source })
  })
})

describe('plugin-api: isDuplicateKey', () => {
  it("tells a unique index's refusal, alone or in a bulk write, from the database's other errors", async () => {
    const client = await new MongoClient(await testMongoUrl()).connect()
    const db = client.db(testDbName('duplicate_key'))
    try {
      const collection = db.collection('things')
      await collection.createIndex({ key: 1 }, { unique: true })
      await collection.insertOne({ key: 'a' })
      const single = await collection.insertOne({ key: 'a' }).catch((error: unknown) => error)
      expect(isDuplicateKey(single)).to.equal(true)
      const bulk = await collection
        .insertMany([{ key: 'a' }, { key: 'b' }], { ordered: false })
        .catch((error: unknown) => error)
      expect(bulk).to.be.instanceOf(MongoBulkWriteError)
      expect([(bulk as MongoBulkWriteError).writeErrors].flat().map(isDuplicateKey)).to.deep.equal([true])
      const other = await db.command({ noSuchCommand: 1 }).catch((error: unknown) => error)
      expect(isDuplicateKey(other)).to.equal(false)
      for (const value of [undefined, null, 'E11000', { code: '11000' }]) expect(isDuplicateKey(value)).to.equal(false)
    } finally {
      await db.dropDatabase().catch(() => undefined)
      await client.close()
    }
  })
})
