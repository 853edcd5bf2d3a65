import { expect } from 'chai'
import { useTestDb, type Loose } from './fixture.ts'

describe('MongoDB conformance: aggregation', () => {
  const t = useTestDb('aggregate')
  const events = () => t.db.collection<Loose>('events')

  before(async () => {
    await events().createIndex({ project_id: 1, timestamp: -1 })
    await events().insertMany(
      Array.from({ length: 300 }, (_, i) => ({
        project_id: i % 3,
        event: ['$pageview', 'signup', 'purchase'][i % 5 === 0 ? 2 : i % 2],
        distinct_id: `u${i % 7}`,
        timestamp: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000),
        properties: { amount: i, tags: i % 4 === 0 ? ['a', 'b'] : ['a'] },
      })),
    )
    await t.db
      .collection<Loose>('persons')
      .insertMany(Array.from({ length: 7 }, (_, i) => ({ distinct_id: `u${i}`, name: `person ${i}` })))
  })

  it('groups, sums and sorts', async () => {
    const rows = await events()
      .aggregate([
        { $match: { project_id: 0 } },
        { $group: { _id: '$event', n: { $sum: 1 }, total: { $sum: '$properties.amount' } } },
        { $sort: { _id: 1 } },
      ])
      .toArray()
    const expected = new Map<string, { n: number; total: number }>()
    for (let i = 0; i < 300; i += 3) {
      const name = ['$pageview', 'signup', 'purchase'][i % 5 === 0 ? 2 : i % 2]
      const row = expected.get(name) ?? { n: 0, total: 0 }
      row.n += 1
      row.total += i
      expected.set(name, row)
    }
    expect(rows).to.deep.equal(
      [...expected.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, v]) => ({ _id: name, ...v })),
    )
  })

  it('counts with countDocuments, including skip and limit', async () => {
    expect(await events().countDocuments({ project_id: 1 })).to.equal(100)
    expect(await events().countDocuments({ project_id: 1, event: 'purchase' })).to.equal(20)
    expect(await events().countDocuments({ project_id: 1 }, { skip: 95 })).to.equal(5)
    expect(await events().countDocuments({ project_id: 1 }, { limit: 7 })).to.equal(7)
  })

  it('unwinds, projects and counts by value', async () => {
    const rows = await events()
      .aggregate([{ $match: { project_id: 2 } }, { $unwind: '$properties.tags' }, { $sortByCount: '$properties.tags' }])
      .toArray()
    expect(rows).to.deep.equal([
      { _id: 'a', count: 100 },
      { _id: 'b', count: 25 },
    ])
  })

  it('joins with $lookup', async () => {
    const rows = await events()
      .aggregate([
        { $match: { project_id: 0 } },
        { $sort: { timestamp: 1 } },
        { $limit: 2 },
        { $lookup: { from: 'persons', localField: 'distinct_id', foreignField: 'distinct_id', as: 'person' } },
        { $project: { _id: 0, distinct_id: 1, name: { $first: '$person.name' } } },
      ])
      .toArray()
    expect(rows).to.deep.equal([
      { distinct_id: 'u0', name: 'person 0' },
      { distinct_id: 'u3', name: 'person 3' },
    ])
  })

  it('runs $facet and $count', async () => {
    const [row] = await events()
      .aggregate([
        { $match: { project_id: 1 } },
        {
          $facet: {
            total: [{ $count: 'n' }],
            newest: [
              { $sort: { timestamp: -1 } },
              { $limit: 1 },
              { $project: { _id: 0, amount: '$properties.amount' } },
            ],
          },
        },
      ])
      .toArray()
    expect(row).to.deep.equal({ total: [{ n: 100 }], newest: [{ amount: 298 }] })
  })

  it('streams a large result through getMore batches', async () => {
    const cursor = events().aggregate([{ $project: { _id: 0, a: '$properties.amount' } }], { batchSize: 25 })
    const amounts: number[] = []
    for await (const row of cursor) amounts.push(row.a as number)
    expect(amounts.sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 300 }, (_, i) => i))
  })

  it('accepts an empty pipeline and an aggregation on a missing collection', async () => {
    expect(await events().aggregate([]).toArray()).to.have.length(300)
    expect(
      await t.db
        .collection('absent')
        .aggregate([{ $match: {} }])
        .toArray(),
    ).to.deep.equal([])
  })
})
