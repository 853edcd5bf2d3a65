import { expect } from 'chai'
import { loadRequestData } from '../../../../plugins/decide/store/request-data.ts'
import { CohortMembers } from '../../../../plugins/decide/store/members.ts'
import { GroupStore } from '../../../../core/model/groups.ts'
import { insertPerson, openTestDb } from './db.ts'
import type { TestDb } from './db.ts'

describe('decide loadRequestData', () => {
  let t: TestDb
  let groups: GroupStore
  let project = 400
  before(async () => {
    t = await openTestDb('decide_request_data')
    groups = new GroupStore(t.db)
  })
  after(() => t.close())
  beforeEach(() => void project++)

  const query = (extra: Partial<Parameters<typeof loadRequestData>[2]> = {}) => ({
    projectId: project,
    distinctId: 'user',
    groups: null,
    groupTypeIndexes: [],
    groupTypeMapping: {},
    readStaticMembership: false,
    ...extra,
  })

  it('reads the person of the distinct id with its creation time', async () => {
    await insertPerson(t.db, project, 'p', ['user'], { plan: 'pro', 'a.b': 1, $browser: 'Firefox' })
    expect(await loadRequestData(t.db, t.persons, query(), groups)).to.deep.equal({
      status: 'loaded',
      person: { properties: { plan: 'pro', 'a.b': 1, $browser: 'Firefox' }, created_at: '2026-01-02T03:04:05.000Z' },
      groupProperties: {},
      staticCohortIds: [],
    })
  })

  it('answers a null person for an unknown distinct id', async () => {
    expect(await loadRequestData(t.db, t.persons, query({ distinctId: 'stranger' }), groups)).to.include({
      person: null,
    })
  })

  it('reads the rows of the groups the flags need, by the request’s key for each type, numbers as text', async () => {
    await t.db.collection('groups').insertMany([
      {
        project_id: project,
        group_type_index: 0,
        group_key: 'acme',
        group_properties: { seats: 5 },
        created_at: new Date(),
        version: 1,
      },
      {
        project_id: project,
        group_type_index: 1,
        group_key: '42',
        group_properties: { tier: 'gold' },
        created_at: new Date(),
        version: 1,
      },
      {
        project_id: project,
        group_type_index: 2,
        group_key: 'x',
        group_properties: { unused: true },
        created_at: new Date(),
        version: 1,
      },
    ])
    const data = await loadRequestData(
      t.db,
      t.persons,
      query({
        groups: { company: 'acme', team: 42, other: 'x' },
        groupTypeIndexes: [0, 1],
        groupTypeMapping: { 0: 'company', 1: 'team', 2: 'other' },
      }),
      groups,
    )
    expect(data).to.deep.include({ groupProperties: { 0: { seats: 5 }, 1: { tier: 'gold' } } })
  })

  it('finds static cohorts holding any distinct id of the person', async () => {
    await insertPerson(t.db, project, 'p', ['user', 'old-anon'])
    const members = new CohortMembers(t.db)
    await members.add(project, 3, ['old-anon'])
    await members.add(project, 4, ['someone-else'])
    expect(await loadRequestData(t.db, t.persons, query({ readStaticMembership: true }), groups)).to.deep.include({
      staticCohortIds: [3],
    })
  })
})
