import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import { upsertGroup } from '../../../plugins/group-update/groups.ts'
import { GROUP_COLLECTIONS } from '../../../core/plugin-api.ts'
import type { GroupDocument } from '../../../core/plugin-api.ts'
import { ensureCoreIndexes } from '../../../core/model/collections.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'

describe('upsertGroup', () => {
  let client: MongoClient
  let db: Db
  let key = 0
  const t1 = new Date('2026-01-02T00:00:00Z')
  const t0 = new Date('2026-01-01T00:00:00Z')

  before(async () => {
    client = await new MongoClient(await testMongoUrl()).connect()
    db = client.db(testDbName('groups'))
    await ensureCoreIndexes(db)
  })
  after(async () => {
    await db.dropDatabase()
    await client.close()
  })
  beforeEach(() => void key++)

  const write = (set: Record<string, unknown>, timestamp = t1) =>
    upsertGroup(db, { projectId: 1, groupTypeIndex: 0, groupKey: `g${key}`, set, timestamp })
  const stored = async () =>
    (await db
      .collection<GroupDocument>(GROUP_COLLECTIONS.groups)
      .findOne(
        { project_id: 1, group_type_index: 0, group_key: `g${key}` },
        { projection: { _id: 0 } },
      )) as GroupDocument

  it('creates the group with $group_set, the event time and version 1', async () => {
    expect(await write({ name: 'Acme' })).to.equal('created')
    expect(await stored()).to.deep.equal({
      project_id: 1,
      group_type_index: 0,
      group_key: `g${key}`,
      group_properties: { name: 'Acme' },
      created_at: t1,
      version: 1,
    })
  })

  it('merges later sets shallowly and bumps the version only when something changed', async () => {
    await write({ name: 'Acme', seats: 5 })
    expect(await write({ seats: 6, plan: 'pro' })).to.equal('updated')
    expect(await write({ seats: 6 })).to.equal('unchanged')
    expect(await stored()).to.deep.include({ group_properties: { name: 'Acme', seats: 6, plan: 'pro' }, version: 2 })
  })

  it('keeps the earliest created_at', async () => {
    await write({ a: 1 }, t1)
    expect(await write({}, t0)).to.equal('updated')
    await write({ a: 2 }, t1)
    expect((await stored()).created_at).to.deep.equal(t0)
  })

  it('stores hostile property names exactly, without touching any update path', async () => {
    const set = JSON.parse(
      '{"$browser": "Firefox", "a.b": 1, "__proto__": {"x": 1}, "$set": {"k": "v"}, "nested": {"$inc": 2, "c.d": [1]}}',
    ) as Record<string, unknown>
    await write(set)
    await write({ $browser: 'Chrome', 'e.f': true })
    const props = (await stored()).group_properties
    expect(Object.keys(props)).to.have.members(['$browser', 'a.b', '__proto__', '$set', 'nested', 'e.f'])
    expect(props.$browser).to.equal('Chrome')
    expect(props['a.b']).to.equal(1)
    expect(Object.getOwnPropertyDescriptor(props, '__proto__')?.value).to.deep.equal({ x: 1 })
    expect(props.nested).to.deep.equal({ $inc: 2, 'c.d': [1] })
  })

  it('loses no update when many writers set different properties of one new group at once', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => write({ [`p${i}`]: i })))
    expect(results.filter((r) => r === 'created')).to.have.length(1)
    const group = await stored()
    expect(Object.keys(group.group_properties)).to.have.length(12)
    for (let i = 0; i < 12; i++) expect(group.group_properties[`p${i}`]).to.equal(i)
    expect(group.version).to.equal(12)
  })
})
