import { expect } from 'chai'
import { MongoClient, type Db } from 'mongodb'
import { testDbName, testMongoUrl } from '../../../helpers/mongo.ts'

/**
 * What MongoDB has and the embedded server does not: each answers an error that names it
 * (code 238 NotImplemented), never a hang or a silently different result.
 */
describe('embedded MongoDB unsupported features', () => {
  let client: MongoClient
  let db: Db

  before(async function () {
    if (process.env.MONGODB_URL) this.skip()
    client = new MongoClient(await testMongoUrl())
    await client.connect()
    db = client.db(testDbName('unsupported'))
    await db.collection('c').insertOne({ a: 1 })
  })

  after(async () => {
    await db?.dropDatabase()
    await client?.close()
  })

  const refused = async (run: () => Promise<unknown>, named: string) => {
    const error = await run().then(
      () => undefined,
      (e: { code?: number; message: string }) => e,
    )
    expect(error, `${named} should be refused`).to.not.equal(undefined)
    expect(error?.code).to.equal(238)
    expect(error?.message).to.include(named)
  }

  it('refuses $out and $merge instead of writing somewhere else', async () => {
    await refused(
      () =>
        db
          .collection('c')
          .aggregate([{ $out: 'copy' }])
          .toArray(),
      '$out',
    )
    await refused(
      () =>
        db
          .collection('c')
          .aggregate([{ $merge: { into: 'copy' } }])
          .toArray(),
      '$merge',
    )
  })

  it('refuses collations, text indexes, capped collections and tailable cursors', async () => {
    await refused(
      () =>
        db
          .collection('c')
          .find({}, { collation: { locale: 'fr' } })
          .toArray(),
      'collation',
    )
    await refused(() => db.collection('c').createIndex({ a: 'text' }), 'text')
    await refused(() => db.createCollection('capped', { capped: true, size: 1000 }), 'capped')
    await refused(() => db.collection('c').find({}, { tailable: true }).toArray(), 'tailable')
  })

  it('refuses multi-document transactions', async () => {
    const session = client.startSession()
    try {
      await refused(
        () => session.withTransaction(() => db.collection('c').insertOne({ b: 1 }, { session })),
        'transactions',
      )
    } finally {
      await session.endSession()
    }
  })

  it('refuses a $type query on an exact numeric type it cannot tell apart', async () => {
    await refused(
      () =>
        db
          .collection('c')
          .find({ a: { $type: 'long' } })
          .toArray(),
      '$type',
    )
    expect(await db.collection('c').countDocuments({ a: { $type: 'number' } })).to.equal(1)
  })

  it('refuses mapReduce by name', async () => {
    await refused(
      () => db.command({ mapReduce: 'c', map: 'function(){}', reduce: 'function(){}', out: { inline: 1 } }),
      'mapReduce',
    )
  })
})
