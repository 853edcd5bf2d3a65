import { expect } from 'chai'
import { HttpError } from '../../../../core/errors.ts'
import { readDefinitions } from '../../../../plugins/decide/definitions/import.ts'
import { DefinitionsReader } from '../../../../plugins/decide/store/definitions.ts'
import { GroupStore } from '../../../../core/model/groups.ts'
import { Generations } from '../../../../plugins/decide/store/generations.ts'
import { ensureGroupTypes, replaceDefinitions } from '../../../../plugins/decide/store/replace.ts'
import { CohortMembers } from '../../../../plugins/decide/store/members.ts'
import { openTestDb } from './db.ts'
import type { TestDb } from './db.ts'

const flag = (id: number, key: string, extra: Record<string, unknown> = {}) => ({
  id,
  key,
  active: true,
  filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
  ...extra,
})
const group = { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] }] }

describe('decide replaceDefinitions', () => {
  let t: TestDb
  let project = 100
  before(async () => {
    t = await openTestDb('decide_replace')
  })
  after(() => t.close())
  beforeEach(() => void project++)

  const read = () => new DefinitionsReader(t.db, new GroupStore(t.db)).load(project)
  const replace = (body: unknown) => replaceDefinitions(t.db, project, readDefinitions(body))
  const countAll = (name: string) => t.db.collection(name).countDocuments({ project_id: project })

  it('makes the new definitions live as a whole and removes the previous generation', async () => {
    await replace({ flags: [flag(1, 'a'), flag(2, 'b')], cohorts: { 5: group } })
    const first = await read()
    expect(first.flags.map((f) => f.key)).to.deep.equal(['a', 'b'])
    expect(first.cohorts.map((c) => c.id)).to.deep.equal([5])
    await replace({ flags: [flag(3, 'c')] })
    const second = await read()
    expect(second.flags.map((f) => [f.id, f.key])).to.deep.equal([[3, 'c']])
    expect(second.cohorts).to.deep.equal([])
    expect(second.version).to.be.greaterThan(first.version)
    expect(await countAll('feature_flags')).to.equal(1)
    expect(await countAll('cohorts')).to.equal(0)
  })

  it('ignores the documents of a replacement that died before going live, and the next one removes them', async () => {
    await replace({ flags: [flag(1, 'live')] })
    const generations = new Generations(t.db)
    const crashed = await generations.reserve(project)
    await t.db.collection('feature_flags').insertOne({
      project_id: project,
      generation: crashed,
      id: 9,
      key: 'half-written',
      active: true,
      deleted: false,
      filters: {},
    })
    expect((await read()).flags.map((f) => f.key)).to.deep.equal(['live'])
    await replace({ flags: [flag(2, 'next')] })
    expect((await read()).flags.map((f) => f.key)).to.deep.equal(['next'])
    expect(await countAll('feature_flags')).to.equal(1)
  })

  it('never lets an older generation go live after a newer one', async () => {
    const generations = new Generations(t.db)
    const older = await generations.reserve(project)
    const newer = await generations.reserve(project)
    expect(await generations.activate(project, newer)).to.equal(true)
    expect(await generations.activate(project, older)).to.equal(false)
    expect((await generations.live(project)).generation).to.equal(newer)
  })

  it('leaves exactly one complete replacement live when several race', async () => {
    const bodies = Array.from({ length: 6 }, (_, i) => ({
      flags: Array.from({ length: 5 }, (_, j) => flag(j + 1, `r${i}-f${j}`)),
    }))
    const outcomes = await Promise.allSettled(bodies.map((body) => replace(body)))
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected')
        expect(outcome.reason).to.be.instanceOf(HttpError).and.to.have.property('status', 409)
    }
    const keys = (await read()).flags.map((f) => f.key)
    const winner = keys[0].split('-')[0]
    expect(keys).to.deep.equal(Array.from({ length: 5 }, (_, j) => `${winner}-f${j}`))
    expect(await countAll('feature_flags')).to.equal(5)
  })

  it('matches imported group types by name, adds missing ones at their index when free, and translates flag indexes', async () => {
    await t.db
      .collection('group_type_mappings')
      .insertOne({ project_id: project, group_type: 'organization', group_type_index: 0, created_at: new Date() })
    await replace({
      flags: [
        flag(1, 'company-flag', {
          filters: {
            aggregation_group_type_index: 0,
            groups: [{ properties: [{ key: 'seats', type: 'group', group_type_index: 0, value: 5 }] }],
          },
        }),
        flag(2, 'org-flag', { filters: { aggregation_group_type_index: 1, groups: [] } }),
        flag(3, 'team-flag', { filters: { aggregation_group_type_index: 2, groups: [] } }),
      ],
      group_type_mapping: { 0: 'company', 1: 'organization', 2: 'team' },
    })
    const live = await read()
    expect(live.groupTypeMapping).to.deep.equal({ 0: 'organization', 1: 'company', 2: 'team' })
    expect(live.flags.map((f) => f.filters.aggregation_group_type_index)).to.deep.equal([1, 0, 2])
    expect(live.flags[0].filters.groups?.[0].properties?.[0].group_type_index).to.equal(1)
  })

  it('refuses a sixth group type with a 400 naming the mapping entry', async () => {
    await ensureGroupTypes(t.db, project, { 0: 'a', 1: 'b', 2: 'c', 3: 'd', 4: 'e' })
    const error = await replace({ flags: [], group_type_mapping: { 0: 'f' } }).catch((e: unknown) => e)
    expect(error).to.be.instanceOf(HttpError).and.to.include({ status: 400, attr: 'group_type_mapping.0' })
  })

  it('keeps the members of static cohorts it still has and drops those of cohorts it removed', async () => {
    await replace({
      flags: [],
      cohorts: { 7: { name: 'kept', is_static: true }, 8: { name: 'dropped', is_static: true } },
    })
    const members = new CohortMembers(t.db)
    await members.add(project, 7, ['u1', 'u2'])
    await members.add(project, 8, ['u3'])
    await replace({ flags: [], cohorts: { 7: { name: 'kept', is_static: true } } })
    expect(await members.list(project, 7, 10)).to.deep.equal(['u1', 'u2'])
    expect(await members.count(project, 8)).to.equal(0)
  })
})
