import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import {
  ensureUsageIndexes,
  listUsage,
  MAX_VALUES,
  recordCall,
  responseValue,
} from '../../../plugins/flag-attribution/usage.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'

describe('flag usage counters', () => {
  let client: MongoClient
  before(async () => {
    client = await MongoClient.connect(await testMongoUrl())
  })
  after(() => client.close())

  it('counts calls, keeps first and last call times and the distinct values seen', async () => {
    const db = client.db(testDbName('usage'))
    await ensureUsageIndexes(db)
    await recordCall(db, 1, 'beta.flag$x', true, new Date('2026-01-02T00:00:00Z'))
    await recordCall(db, 1, 'beta.flag$x', false, new Date('2026-01-01T00:00:00Z'))
    await recordCall(db, 1, 'beta.flag$x', true, new Date('2026-01-03T00:00:00Z'))
    await recordCall(db, 2, 'beta.flag$x', 'other project', new Date())
    const [usage] = await listUsage(db, 1)
    expect(usage).to.deep.include({
      flag_key: 'beta.flag$x',
      calls: 3,
      first_called_at: new Date('2026-01-01T00:00:00Z'),
      last_called_at: new Date('2026-01-03T00:00:00Z'),
    })
    expect(usage.values).to.have.members([true, false])
    await db.dropDatabase()
  })

  it('stops remembering values past the bound, so a hostile client cannot grow the document', async () => {
    const db = client.db(testDbName('usage'))
    await Promise.all(Array.from({ length: MAX_VALUES + 20 }, (_, i) => recordCall(db, 1, 'many', `v${i}`, new Date())))
    const [usage] = await listUsage(db, 1)
    expect(usage.calls).to.equal(MAX_VALUES + 20)
    expect(usage.values).to.have.length(MAX_VALUES)
    await db.dropDatabase()
  })

  it('keeps responses short and comparable', () => {
    expect(responseValue(true)).to.equal(true)
    expect(responseValue('x'.repeat(500))).to.have.length(200)
    expect(responseValue({ a: 1 })).to.equal('{"a":1}')
    expect(responseValue(undefined)).to.equal('null')
  })
})
