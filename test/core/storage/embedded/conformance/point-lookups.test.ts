import { expect } from 'chai'
import { useTestDb, type Loose } from './fixture.ts'

describe('MongoDB conformance: equality finds on a unique index', () => {
  const t = useTestDb('point_lookups')

  it('answers an $in of whole keys with each matching document once, missing and repeated values included', async () => {
    const mappings = t.db.collection<Loose>('mappings')
    await mappings.createIndex({ project_id: 1, distinct_id: 1 }, { unique: true })
    await mappings.insertMany(
      ['a', 'b', 'c'].flatMap((id) => [
        { project_id: 1, distinct_id: id, person: `p-${id}` },
        { project_id: 2, distinct_id: id, person: `q-${id}` },
      ]),
    )
    const found = await mappings
      .find({ project_id: 1, distinct_id: { $in: ['c', 'x', 'a', 'c'] } }, { projection: { _id: 0, person: 1 } })
      .toArray()
    expect(found.map((d) => d.person).sort()).to.deep.equal(['p-a', 'p-c'])
    expect(
      await mappings.findOne({ project_id: 2, distinct_id: 'b' }, { projection: { _id: 0, person: 1 } }),
    ).to.deep.equal({ person: 'q-b' })
    expect(await mappings.findOne({ project_id: 3, distinct_id: 'b' })).to.equal(null)
  })

  it('re-checks the rest of the filter and applies a sort to the documents the keys found', async () => {
    const persons = t.db.collection<Loose>('persons')
    await persons.createIndex({ project_id: 1, id: 1 }, { unique: true })
    await persons.insertMany([
      { project_id: 1, id: 'p1', version: 3 },
      { project_id: 1, id: 'p2', version: 1 },
      { project_id: 1, id: 'p3', version: 2 },
    ])
    const versioned = await persons
      .find({ project_id: 1, id: { $in: ['p1', 'p2', 'p3'] }, version: { $gte: 2 } })
      .sort({ version: 1 })
      .toArray()
    expect(versioned.map((d) => d.id)).to.deep.equal(['p3', 'p1'])
    const replaced = await persons.replaceOne(
      { project_id: 1, id: 'p2', version: 1 },
      { project_id: 1, id: 'p2', version: 2 },
    )
    expect(replaced.matchedCount).to.equal(1)
    expect(
      (await persons.replaceOne({ project_id: 1, id: 'p2', version: 1 }, { project_id: 1, id: 'p2', version: 9 }))
        .matchedCount,
    ).to.equal(0)
  })

  it('returns a document of a multikey unique index once, however many of its keys the $in names', async () => {
    const tagged = t.db.collection<Loose>('tagged')
    await tagged.createIndex({ tags: 1 }, { unique: true })
    await tagged.insertMany([
      { _id: 1, tags: ['a', 'b'] },
      { _id: 2, tags: ['c'] },
    ])
    const found = await tagged.find({ tags: { $in: ['a', 'b', 'c'] } }).toArray()
    expect(found.map((d) => d._id).sort()).to.deep.equal([1, 2])
  })

  it('does not return, in a later batch, a document whose key was changed after the find started', async () => {
    const mappings = t.db.collection<Loose>('moving')
    await mappings.createIndex({ project_id: 1, distinct_id: 1 }, { unique: true })
    await mappings.insertMany(['a', 'b', 'c'].map((id) => ({ project_id: 1, distinct_id: id })))
    const cursor = mappings
      .find({ project_id: 1, distinct_id: { $in: ['a', 'b', 'c'] } }, { projection: { _id: 0, distinct_id: 1 } })
      .batchSize(1)
    const first = await cursor.next()
    const rest = ['a', 'b', 'c'].filter((id) => id !== first?.distinct_id)
    await mappings.updateOne({ project_id: 1, distinct_id: rest[1] }, { $set: { distinct_id: 'moved' } })
    const seen = [first?.distinct_id, ...(await cursor.toArray()).map((d) => d.distinct_id)]
    expect(seen).to.not.include('moved')
    expect(seen).to.include(rest[0])
  })
})
