import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import { GroupTypeMappings } from '../../../plugins/group-update/type-mapping.ts'
import { GROUP_COLLECTIONS } from '../../../core/plugin-api.ts'
import { ensureCoreIndexes } from '../../../core/model/collections.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'

describe('GroupTypeMappings', () => {
  const clients: MongoClient[] = []
  let db: Db
  let project = 0
  const seen = new Date('2026-01-01T00:00:00Z')

  before(async () => {
    const url = await testMongoUrl()
    // several clients stand for several service processes, each with its own cache
    for (let i = 0; i < 4; i++) clients.push(await new MongoClient(url).connect())
    db = clients[0].db(testDbName('group_types'))
    await ensureCoreIndexes(db)
  })
  after(async () => {
    await db.dropDatabase()
    await Promise.all(clients.map((c) => c.close()))
  })
  beforeEach(() => void project++)

  const processes = (n: number) =>
    Array.from({ length: n }, (_, i) => new GroupTypeMappings(clients[i % clients.length].db(db.databaseName)))
  const stored = () =>
    db
      .collection(GROUP_COLLECTIONS.groupTypeMappings)
      .find({ project_id: project }, { projection: { _id: 0 } })
      .sort({ group_type_index: 1 })
      .toArray()

  it('gives new types the lowest free index, in order of first sight, and the same index ever after', async () => {
    const mappings = new GroupTypeMappings(db)
    expect(await mappings.indexOf(project, 'company', seen)).to.equal(0)
    expect(await mappings.indexOf(project, 'project', seen)).to.equal(1)
    expect(await mappings.indexOf(project, 'company', seen)).to.equal(0)
    expect(await new GroupTypeMappings(db).indexOf(project, 'project', seen)).to.equal(1)
    expect(await stored()).to.deep.equal([
      { project_id: project, group_type: 'company', group_type_index: 0, created_at: seen },
      { project_id: project, group_type: 'project', group_type_index: 1, created_at: seen },
    ])
  })

  it('keeps projects apart', async () => {
    const mappings = new GroupTypeMappings(db)
    expect(await mappings.indexOf(project, 'team', seen)).to.equal(0)
    expect(await mappings.indexOf(project + 1000, 'other', seen)).to.equal(0)
    expect(await mappings.indexOf(project + 1000, 'team', seen)).to.equal(1)
  })

  it('refuses a sixth type, from any process, and keeps the five it has', async () => {
    const mappings = new GroupTypeMappings(db)
    for (const [i, type] of ['a', 'b', 'c', 'd', 'e'].entries())
      expect(await mappings.indexOf(project, type, seen)).to.equal(i)
    expect(await mappings.indexOf(project, 'f', seen)).to.equal('limit_reached')
    expect(await new GroupTypeMappings(db).indexOf(project, 'f', seen)).to.equal('limit_reached')
    expect(await mappings.indexOf(project, 'e', seen)).to.equal(4)
    expect(await stored()).to.have.length(5)
  })

  it('gives one new type one index when many processes see it at once', async () => {
    const indexes = await Promise.all(processes(12).map((m) => m.indexOf(project, 'organization', seen)))
    expect(new Set(indexes)).to.deep.equal(new Set([0]))
    expect(await stored()).to.have.length(1)
  })

  it('gives different new types different indexes when they are first seen at once', async () => {
    const types = ['t0', 't1', 't2', 't3', 't4']
    const indexes = await Promise.all(processes(10).map((m, i) => m.indexOf(project, types[i % 5], seen)))
    const byType = new Map<string, Set<unknown>>()
    indexes.forEach((index, i) => byType.set(types[i % 5], (byType.get(types[i % 5]) ?? new Set()).add(index)))
    for (const [type, set] of byType) expect(set.size, type).to.equal(1)
    expect([...byType.values()].map((s) => [...s][0]).sort()).to.deep.equal([0, 1, 2, 3, 4])
    expect((await stored()).map((d) => d.group_type_index)).to.deep.equal([0, 1, 2, 3, 4])
  })

  it('lets exactly five of seven types seen at once in, with distinct indexes', async () => {
    const types = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6']
    const indexes = await Promise.all(processes(7).map((m, i) => m.indexOf(project, types[i], seen)))
    expect(indexes.filter((i) => i === 'limit_reached')).to.have.length(2)
    expect(indexes.filter((i) => i !== 'limit_reached').sort()).to.deep.equal([0, 1, 2, 3, 4])
    expect(await stored()).to.have.length(5)
  })
})
