import { expect } from 'chai'
import type { CommandStartedEvent, MongoClient } from 'mongodb'
import { findAll } from '../../../../plugins/decide/store/find-command.ts'
import { monitoredClient, testDbName } from '../../../helpers/mongo.ts'

describe('decide findAll', () => {
  let client: MongoClient
  const commands: string[] = []
  before(async () => {
    client = await monitoredClient((event: CommandStartedEvent) => commands.push(event.commandName))
  })
  after(() => client.close())

  it('reads every matching document with its projection, in one command when `expected` holds', async () => {
    const db = client.db(testDbName('find-command'))
    await db.collection('rows').insertMany(Array.from({ length: 10 }, (_, i) => ({ k: i, project: i % 2, hidden: 'x' })))
    commands.length = 0
    const rows = await findAll<{ k: number }>(db, 'rows', { project: 0 }, { _id: 0, k: 1 }, 5)
    expect(rows.map((row) => row.k).sort((a, b) => a - b)).to.deep.equal([0, 2, 4, 6, 8])
    expect(rows[0]).to.have.all.keys('k')
    expect(commands).to.deep.equal(['find'])
    await db.dropDatabase()
  })

  it('follows the cursor with getMore when more documents match than expected', async () => {
    const db = client.db(testDbName('find-command-more'))
    await db.collection('rows').insertMany(Array.from({ length: 30 }, (_, i) => ({ k: i })))
    commands.length = 0
    const rows = await findAll<{ k: number }>(db, 'rows', {}, { _id: 0, k: 1 }, 3)
    expect(rows.map((row) => row.k).sort((a, b) => a - b)).to.deep.equal([...Array(30).keys()])
    expect(commands[0]).to.equal('find')
    expect(commands.filter((name) => name === 'getMore').length).to.be.greaterThan(0)
    await db.dropDatabase()
  })
})
