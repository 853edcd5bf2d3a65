import { expect } from 'chai'
import { readHashKeyOverrides, writeHashKeyOverrides } from '../../../../plugins/decide/store/hash-key-overrides.ts'
import { insertPerson, openTestDb } from './db.ts'
import type { TestDb } from './db.ts'

describe('decide hash key overrides', () => {
  let t: TestDb
  let project = 300
  before(async () => {
    t = await openTestDb('decide_hko')
  })
  after(() => t.close())
  beforeEach(() => void project++)

  it('stores the anon id for each continuity flag of the person, once, and reads it back by either id', async () => {
    await insertPerson(t.db, project, 'p1', ['user', 'anon'])
    await writeHashKeyOverrides(t, project, { hashKey: 'anon', distinctIds: ['user', 'anon'], flagKeys: ['a', 'b'] })
    await writeHashKeyOverrides(t, project, {
      hashKey: 'later-anon',
      distinctIds: ['user', 'later-anon'],
      flagKeys: ['a', 'c'],
    })
    expect({ ...(await readHashKeyOverrides(t, project, ['user'])) }).to.deep.equal({
      a: 'anon',
      b: 'anon',
      c: 'later-anon',
    })
    expect({ ...(await readHashKeyOverrides(t, project, ['anon'])) }).to.deep.equal({
      a: 'anon',
      b: 'anon',
      c: 'later-anon',
    })
    expect(await t.db.collection('hash_key_overrides').countDocuments({ project_id: project })).to.equal(3)
  })

  it('writes nothing for ids without a person', async () => {
    await writeHashKeyOverrides(t, project, { hashKey: 'anon', distinctIds: ['nobody', 'anon'], flagKeys: ['a'] })
    expect({ ...(await readHashKeyOverrides(t, project, ['nobody', 'anon'])) }).to.deep.equal({})
  })

  it('gives the first id’s person priority when the ids belong to two persons', async () => {
    await insertPerson(t.db, project, 'first', ['user'])
    await insertPerson(t.db, project, 'second', ['anon'])
    await t.db.collection('hash_key_overrides').insertMany([
      { project_id: project, person_id: 'first', feature_flag_key: 'a', hash_key: 'from-first' },
      { project_id: project, person_id: 'second', feature_flag_key: 'a', hash_key: 'from-second' },
      { project_id: project, person_id: 'second', feature_flag_key: 'b', hash_key: 'only-second' },
    ])
    expect({ ...(await readHashKeyOverrides(t, project, ['user', 'anon'])) }).to.deep.equal({
      a: 'from-first',
      b: 'only-second',
    })
  })

  it('keeps the first override when concurrent requests write the same flag', async () => {
    await insertPerson(t.db, project, 'p', ['user'])
    await Promise.all(
      ['x', 'y', 'z', 'w'].map((hashKey) =>
        writeHashKeyOverrides(t, project, { hashKey, distinctIds: ['user'], flagKeys: ['f'] }),
      ),
    )
    expect(await t.db.collection('hash_key_overrides').countDocuments({ project_id: project })).to.equal(1)
  })

  it('reads overrides of flags named like Object.prototype members', async () => {
    await insertPerson(t.db, project, 'p', ['user'])
    await writeHashKeyOverrides(t, project, {
      hashKey: 'anon',
      distinctIds: ['user'],
      flagKeys: ['constructor', '__proto__'],
    })
    const overrides = await readHashKeyOverrides(t, project, ['user'])
    expect(Object.keys(overrides).sort()).to.deep.equal(['__proto__', 'constructor'])
  })
})
