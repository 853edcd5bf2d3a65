import { expect } from 'chai'
import { dependencyChains, reachableCohorts, toSdkDefinitions } from '../../../plugins/decide/sdk-format.ts'
import type { CohortDocument, FlagDocument } from '../../../plugins/decide/store/documents.ts'
import type { ConditionSet } from '../../../plugins/decide/evaluator/index.ts'

const at = new Date(0)
function flag(id: number, key: string, groups: ConditionSet[], extra: Partial<FlagDocument> = {}): FlagDocument {
  return {
    project_id: 1,
    generation: 1,
    id,
    key,
    name: null,
    active: true,
    deleted: false,
    ensure_experience_continuity: false,
    version: 1,
    filters: { groups },
    created_at: at,
    updated_at: at,
    ...extra,
  }
}
const dependsOn = (...keys: string[]): ConditionSet[] => [
  {
    properties: keys.map((key) => ({ key, type: 'flag', value: true, operator: 'flag_evaluates_to' })),
    rollout_percentage: 100,
  },
]
function cohort(id: number, properties: unknown, extra: Partial<CohortDocument> = {}): CohortDocument {
  return {
    project_id: 1,
    generation: 1,
    id,
    name: null,
    description: '',
    is_static: false,
    deleted: false,
    filters: { properties },
    version: 0,
    created_at: at,
    updated_at: at,
    ...extra,
  }
}
const flagFilters = (body: ReturnType<typeof toSdkDefinitions>, key: string) =>
  (body.flags.find((f) => f.key === key) as { filters: { groups: ConditionSet[] } }).filters.groups[0].properties ?? []

describe('decide SDK definitions format', () => {
  it('rewrites dependencies from ids to keys with the topologically sorted chain (PostHog: C → B → A)', () => {
    const flags = [flag(1, 'flag-a', []), flag(2, 'flag-b', dependsOn('1')), flag(3, 'flag-c', dependsOn('2'))]
    const body = toSdkDefinitions(7, flags, [], {})
    expect(flagFilters(body, 'flag-c')[0])
      .to.include({ key: 'flag-b' })
      .and.to.have.deep.property('dependency_chain', ['flag-a', 'flag-b'])
    expect(flagFilters(body, 'flag-b')[0]).to.have.deep.property('dependency_chain', ['flag-a'])
    expect(flags[2].filters.groups?.[0].properties?.[0].key, 'stored filters are left as they were').to.equal('2')
  })

  it('lists shared and transitive dependencies once, dependencies first (flag-d → flag-c → flag-a, flag-b)', () => {
    const flags = [
      flag(1, 'flag-a', []),
      flag(2, 'flag-b', []),
      flag(3, 'flag-c', dependsOn('1', '2')),
      flag(4, 'flag-d', dependsOn('3')),
    ]
    const body = toSdkDefinitions(7, flags, [], {})
    expect(flagFilters(body, 'flag-d')[0].dependency_chain).to.deep.equal(['flag-a', 'flag-b', 'flag-c'])
    expect(flagFilters(body, 'flag-c').map((f) => f.dependency_chain)).to.deep.equal([['flag-a'], ['flag-b']])
  })

  it('gives an empty chain to cycles, self-references, what depends on them, and missing flags (key kept)', () => {
    const flags = [
      flag(1, 'a', dependsOn('2')),
      flag(2, 'b', dependsOn('1')),
      flag(3, 'self', dependsOn('self')),
      flag(4, 'above', dependsOn('3')),
      flag(5, 'lost', dependsOn('999')),
    ]
    const chains = dependencyChains(flags)
    expect([...chains.values()]).to.deep.equal([null, null, null, null, null])
    const body = toSdkDefinitions(7, flags, [], {})
    expect(flagFilters(body, 'a')[0]).to.deep.include({ key: 'b', dependency_chain: [] })
    expect(flagFilters(body, 'above')[0]).to.deep.include({ key: 'self', dependency_chain: [] })
    expect(flagFilters(body, 'lost')[0]).to.deep.include({ key: '999', dependency_chain: [] })
  })

  it('leaves deleted flags out, so a dependency on one is missing; keeps inactive flags (SDKs answer false)', () => {
    const flags = [
      flag(1, 'gone', [], { deleted: true }),
      flag(2, 'off', [], { active: false }),
      flag(3, 'child', dependsOn('1')),
    ]
    const body = toSdkDefinitions(7, flags, [], { 0: 'company' })
    expect(body.flags.map((f) => f.key)).to.deep.equal(['off', 'child'])
    expect(flagFilters(body, 'child')[0]).to.deep.include({ key: '1', dependency_chain: [] })
    expect(body.group_type_mapping).to.deep.equal({ 0: 'company' })
    expect(body.flags[0]).to.include({ team_id: 7, active: false, deleted: false })
  })

  it('sends the dynamic cohorts the flags reach, nested ones included, and no static, deleted or unused cohort', () => {
    const group = (id: number) => ({
      type: 'OR',
      values: [{ type: 'AND', values: [{ key: 'id', type: 'cohort', value: id }] }],
    })
    const email = {
      type: 'OR',
      values: [{ type: 'AND', values: [{ key: 'email', type: 'person', value: 'x', operator: 'icontains' }] }],
    }
    const cohorts = [
      cohort(10, group(11)),
      cohort(11, email),
      cohort(12, email),
      cohort(13, {}, { is_static: true, filters: {} }),
      cohort(14, email, { deleted: true }),
    ]
    const flags = [
      flag(1, 'f', [
        {
          properties: [
            { key: 'id', type: 'cohort', value: 10 },
            { key: 'id', type: 'cohort', value: '13' },
            { key: 'id', type: 'cohort', value: 14 },
          ],
        },
      ]),
    ]
    expect(reachableCohorts(flags, cohorts).map((c) => c.id)).to.deep.equal([10, 11])
    expect(toSdkDefinitions(7, flags, cohorts, {}).cohorts).to.deep.equal({ 10: group(11), 11: email })
  })
})
