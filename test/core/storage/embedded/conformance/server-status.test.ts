import { expect } from 'chai'
import { useTestDb, type Loose } from './fixture.ts'

describe('MongoDB conformance: serverStatus', () => {
  const t = useTestDb('server_status')

  it('counts the commands run by name in metrics.commands.<name>.total', async () => {
    const totals = async () =>
      (await t.db.admin().command({ serverStatus: 1 })).metrics.commands as Record<string, { total: unknown }>
    const before = await totals()
    const coll = t.db.collection<Loose>('counted')
    await coll.insertOne({ a: 1 })
    await coll.insertOne({ a: 2 })
    await coll.findOne({ a: 1 })
    const after = await totals()
    const grew = (name: string) => Number(after[name]!.total) - Number(before[name]?.total ?? 0)
    expect(grew('insert')).to.be.at.least(2)
    expect(grew('find')).to.be.at.least(1)
  })
})
