import { expect } from 'chai'
import { hashFor } from '../../../../plugins/decide/evaluator/hash.ts'
import { evaluate, evaluateOne, flag } from './helpers.ts'

const mapping = { '0': 'company', '1': 'project' }
const groupFilter = (key: string, value: unknown, index = 0) => ({
  key,
  value,
  operator: 'exact',
  type: 'group',
  group_type_index: index,
})

function companyFlag(key: string, rollout = 100, properties = [groupFilter('plan', 'enterprise')]) {
  return flag(key, { aggregation_group_type_index: 0, groups: [{ properties, rollout_percentage: rollout }] })
}

describe('evaluator group flags (flags.md §5)', () => {
  it('reads group properties through the group-type mapping, overrides over stored', () => {
    const definition = companyFlag('group-props')
    const database = { status: 'loaded' as const, person: null, groupProperties: { 0: { plan: 'free' } } }
    expect(
      evaluateOne(definition, { groupTypeMapping: mapping, groups: { company: 'acme' }, database }).enabled,
    ).to.equal(false)
    const overridden = evaluateOne(definition, {
      groupTypeMapping: mapping,
      groups: { company: 'acme' },
      database,
      groupPropertyOverrides: { company: { plan: 'enterprise' } },
    })
    expect(overridden.enabled).to.equal(true)
  })

  it('hashes the group key, not the distinct id', () => {
    let key = ''
    for (let i = 0; !key; i++) {
      const candidate = `company-${i}`
      if (hashFor('group-hash', candidate) <= 0.5 && hashFor('group-hash', 'user-1') > 0.5) key = candidate
      if (i > 1000) throw new Error('no candidate')
    }
    const definition = companyFlag('group-hash', 50, [])
    expect(evaluateOne(definition, { groupTypeMapping: mapping, groups: { company: key } }).enabled).to.equal(true)
  })

  it('accepts a numeric group key as its decimal text', () => {
    const definition = companyFlag('numeric-group', 50, [])
    const expected = hashFor('numeric-group', '42') <= 0.5
    expect(evaluateOne(definition, { groupTypeMapping: mapping, groups: { company: 42 } }).enabled).to.equal(expected)
  })

  it('answers no_group_type when the request names no usable key for the type', () => {
    const definition = companyFlag('no-key')
    for (const groups of [undefined, {}, { project: 'p' }, { company: '' }, { company: null }, { company: true }]) {
      const result = evaluateOne(definition, {
        groupTypeMapping: mapping,
        groups: groups as Record<string, unknown> | undefined,
      })
      expect(result.enabled).to.equal(false)
      expect(result.reason).to.deep.equal({ code: 'no_group_type', condition_index: 0, description: 'No group type' })
    }
  })

  it('answers no_group_type without an error when the project has no group types', () => {
    const result = evaluate([companyFlag('no-mapping')], { groups: { company: 'acme' } })
    expect(result.flags['no-mapping'].reason.code).to.equal('no_group_type')
    expect(result.errorsWhileComputingFlags).to.equal(false)
  })

  it('flags an error when the mapping could not be loaded', () => {
    const person = flag('person-flag', { groups: [{ properties: [], rollout_percentage: 100 }] })
    const result = evaluate([companyFlag('mapping-failed'), person], {
      groups: { company: 'acme' },
      groupTypeMappingFailed: true,
    })
    expect(result.errorsWhileComputingFlags).to.equal(true)
    expect(result.flags['mapping-failed'].reason.code).to.equal('no_group_type')
    expect(result.flags['person-flag'].enabled).to.equal(true)
  })

  describe('mixed targeting (§5.3)', () => {
    const mixed = flag('mixed', {
      groups: [
        {
          properties: [{ key: 'email', value: 'posthog', operator: 'icontains', type: 'person' }],
          rollout_percentage: 100,
        },
        { properties: [groupFilter('plan', 'enterprise')], rollout_percentage: 100, aggregation_group_type_index: 0 },
      ],
    })

    it('evaluates a group-aggregated set inside a person flag', () => {
      const result = evaluateOne(mixed, {
        groupTypeMapping: mapping,
        groups: { company: 'acme' },
        groupPropertyOverrides: { company: { plan: 'enterprise' } },
      })
      expect(result.reason).to.deep.equal({
        code: 'condition_match',
        condition_index: 1,
        description: 'Matched condition set 2',
      })
    })

    it('keeps the person sets person-based', () => {
      expect(
        evaluateOne(mixed, { personPropertyOverrides: { email: 'me@posthog.com' } }).reason.condition_index,
      ).to.equal(0)
    })

    it("reads group filters of another type from that type's properties", () => {
      const crossType = flag('cross-type', {
        aggregation_group_type_index: 0,
        groups: [{ properties: [groupFilter('tier', 'gold', 1)], rollout_percentage: 100 }],
      })
      const result = evaluateOne(crossType, {
        groupTypeMapping: mapping,
        groups: { company: 'acme', project: 'p1' },
        groupPropertyOverrides: { company: { tier: 'bronze' }, project: { tier: 'gold' } },
      })
      expect(result.enabled).to.equal(true)
    })

    it('lets an explicit null aggregation on a set mean person inside a group flag', () => {
      const personSet = flag('explicit-person', {
        aggregation_group_type_index: 0,
        groups: [{ properties: [], rollout_percentage: 100, aggregation_group_type_index: null }],
      })
      expect(evaluateOne(personSet, { groupTypeMapping: mapping }).enabled).to.equal(true)
    })
  })
})
