import { expect } from 'chai'
import type { CommandStartedEvent, Document, MongoClient } from 'mongodb'
import { findAll } from '../../../core/model/find-all.ts'
import { monitoredClient, testDbName } from '../../helpers/mongo.ts'

describe('findAll', () => {
  let client: MongoClient
  const commands: string[] = []
  before(async () => {
    client = await monitoredClient((event: CommandStartedEvent) => commands.push(event.commandName))
  })
  after(() => client.close())

  it('answers the documents of a find in one command, projected, when the first batch holds them', async () => {
    const collection = client.db(testDbName('findall')).collection('rows')
    await collection.insertMany(
      Array.from({ length: 150 }, (_, i) => ({ project_id: 1, key: `k${i}`, n: i, hidden: 'x' })),
    )
    commands.length = 0
    const keys = Array.from({ length: 150 }, (_, i) => `k${i}`).concat('missing')
    const rows = await findAll<Document, { key: string; n: number }>(
      collection,
      { project_id: 1, key: { $in: keys } },
      { _id: 0, key: 1, n: 1 },
      keys.length,
    )
    expect(rows).to.have.length(150)
    expect(rows.find((row) => row.key === 'k0')).to.deep.equal({ key: 'k0', n: 0 })
    expect(commands).to.deep.equal(['find'])
  })

  it('reads every document through a cursor when more match than expected, closing the first cursor', async () => {
    const collection = client.db(testDbName('findall-more')).collection('rows')
    await collection.insertMany(Array.from({ length: 30 }, (_, i) => ({ k: i })))
    commands.length = 0
    const rows = await findAll<Document, { k: number }>(collection, {}, { _id: 0, k: 1 }, 3)
    expect(rows.map((row) => row.k).sort((a, b) => a - b)).to.deep.equal([...Array(30).keys()])
    expect(commands.slice(0, 3)).to.deep.equal(['find', 'killCursors', 'find'])
  })

  it('reads a result larger than one batch (16 MB) completely', async () => {
    const collection = client.db(testDbName('findall-big')).collection('big')
    const padding = 'x'.repeat(1024 * 1024)
    for (let i = 0; i < 20; i++) await collection.insertOne({ project_id: 1, key: `k${i}`, padding })
    const keys = await findAll<Document, { key: string }>(collection, { project_id: 1 }, { _id: 0, key: 1 })
    expect(keys.map((row) => row.key)).to.have.length(20)
    const full = await findAll<Document, { padding: string }>(collection, { project_id: 1 }, { _id: 0 })
    expect(full).to.have.length(20)
    expect(full.every((row) => row.padding === padding)).to.equal(true)
  })
})
