import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import { findAll } from '../../../plugins/alias-resolve/batched-commands.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'

describe('findAll', () => {
  let client: MongoClient
  before(async () => {
    client = new MongoClient(await testMongoUrl())
    await client.connect()
  })
  after(async () => client.close())

  it('answers the documents of a find in one command, projected', async () => {
    const collection = client.db(testDbName('findall')).collection('rows')
    await collection.insertMany(Array.from({ length: 150 }, (_, i) => ({ project_id: 1, key: `k${i}`, n: i })))
    const rows = await findAll(collection, { project_id: 1, key: { $in: Array.from({ length: 150 }, (_, i) => `k${i}`).concat('missing') } }, { _id: 0 })
    expect(rows).to.have.length(150)
    expect(rows[0]).to.deep.equal({ project_id: 1, key: 'k0', n: 0 })
  })

  it('reads a result larger than one batch (16 MB) through a cursor, completely', async () => {
    const collection = client.db(testDbName('findall')).collection('big')
    const padding = 'x'.repeat(1024 * 1024)
    for (let i = 0; i < 20; i++) await collection.insertOne({ project_id: 1, key: `k${i}`, padding })
    const rows = await findAll(collection, { project_id: 1 }, { _id: 0, key: 1 })
    expect(rows.map((row) => row.key)).to.have.length(20)
    const full = await findAll(collection, { project_id: 1 }, { _id: 0 })
    expect(full).to.have.length(20)
    expect(full.every((row) => row.padding === padding)).to.equal(true)
  })
})
