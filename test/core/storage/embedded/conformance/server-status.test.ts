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

describe('MongoDB conformance: serverStatus documents examined', () => {
  const t = useTestDb('server_status_scanned')
  const scanned = async () =>
    Number((await t.db.admin().command({ serverStatus: 1 })).metrics.queryExecutor.scannedObjects)

  it('counts the documents queries read in metrics.queryExecutor.scannedObjects: few through an index, all in a scan', async () => {
    const coll = t.db.collection<Loose>('scanned')
    await coll.insertMany(Array.from({ length: 200 }, (_, i) => ({ a: i, b: i })))
    await coll.createIndex({ a: 1 })
    const start = await scanned()
    expect(await coll.countDocuments({ a: { $gte: 10, $lt: 13 } })).to.equal(3)
    const indexed = await scanned()
    expect(indexed - start).to.be.within(3, 10)
    expect(await coll.findOne({ b: 150 })).to.include({ a: 150 })
    expect((await scanned()) - indexed).to.be.at.least(150)
  })
})
