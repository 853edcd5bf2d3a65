import { expect } from 'chai'
import { evaluateOne, flag } from './helpers.ts'

const person = (key: string, value: unknown, operator = 'exact') => ({ key, value, operator, type: 'person' })

describe('evaluator order for one flag (flags.md §3)', () => {
  it('evaluates condition sets in stored order: a later variant override does not jump ahead', () => {
    const definition = flag('ordered', {
      groups: [
        { properties: [], rollout_percentage: 100 },
        { properties: [], rollout_percentage: 100, variant: 'forced' },
      ],
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 100 },
          { key: 'forced', rollout_percentage: 0 },
        ],
      },
    })
    const result = evaluateOne(definition)
    expect(result.variant).to.equal('control')
    expect(result.reason).to.deep.equal({
      code: 'condition_match',
      condition_index: 0,
      description: 'Matched condition set 1',
    })
  })

  it('ANDs the filters of a set and ORs the sets', () => {
    const definition = flag('and-or', {
      groups: [
        { properties: [person('plan', 'pro'), person('country', 'FR')], rollout_percentage: 100 },
        { properties: [person('email', 'posthog', 'icontains')], rollout_percentage: 100 },
      ],
    })
    expect(evaluateOne(definition, { personPropertyOverrides: { plan: 'pro', country: 'DE' } }).enabled).to.equal(false)
    expect(
      evaluateOne(definition, { personPropertyOverrides: { plan: 'pro', country: 'fr' } }).reason.condition_index,
    ).to.equal(0)
    const second = evaluateOne(definition, { personPropertyOverrides: { email: 'a@posthog.com' } })
    expect(second.reason).to.deep.equal({
      code: 'condition_match',
      condition_index: 1,
      description: 'Matched condition set 2',
    })
  })

  it('reports the highest-ranked reason when nothing matches: out_of_rollout_bound beats no_condition_match', () => {
    const definition = flag('best-reason', {
      groups: [
        { properties: [], rollout_percentage: 0 },
        { properties: [person('plan', 'pro')], rollout_percentage: 100 },
      ],
    })
    expect(evaluateOne(definition).reason).to.deep.equal({
      code: 'out_of_rollout_bound',
      condition_index: 0,
      description: 'Out of rollout bound',
    })
  })

  it('lets the later set win a tie', () => {
    const definition = flag('tie', {
      groups: [
        { properties: [person('plan', 'pro')], rollout_percentage: 100 },
        { properties: [person('plan', 'team')], rollout_percentage: 100 },
      ],
    })
    expect(evaluateOne(definition).reason).to.deep.equal({
      code: 'no_condition_match',
      condition_index: 1,
      description: 'No matching condition set',
    })
  })

  it('answers false, no_group_type, null for a flag with no condition sets', () => {
    const result = evaluateOne(flag('empty', { groups: [] }))
    expect(result.enabled).to.equal(false)
    expect(result.reason).to.deep.equal({ code: 'no_group_type', condition_index: null, description: 'No group type' })
  })

  it('says group sets were not evaluated when a person set missed and a group set was skipped', () => {
    const definition = flag('mixed', {
      groups: [
        { properties: [person('plan', 'pro')], rollout_percentage: 100 },
        { properties: [], rollout_percentage: 100, aggregation_group_type_index: 0 },
      ],
    })
    const result = evaluateOne(definition, { groupTypeMapping: { '0': 'company' } })
    expect(result.reason).to.deep.equal({
      code: 'no_condition_match',
      condition_index: 0,
      description: 'No matching condition set (group conditions were not evaluated because no group type was provided)',
    })
  })

  it('stops at the first failing filter before reaching cohort filters, so a deleted cohort raises no error', () => {
    const definition = flag('short-circuit', {
      groups: [
        { properties: [{ key: 'id', value: 999, type: 'cohort' }, person('plan', 'pro')], rollout_percentage: 100 },
      ],
    })
    const result = evaluateOne(definition, { database: { status: 'loaded', person: null }, cohorts: [] })
    expect(result.failed).to.equal(false)
    expect(result.reason.code).to.equal('no_condition_match')
  })

  it('treats null and empty property lists alike', () => {
    expect(
      evaluateOne(flag('null-props', { groups: [{ properties: null, rollout_percentage: 100 }] })).enabled,
    ).to.equal(true)
    expect(evaluateOne(flag('no-props', { groups: [{ rollout_percentage: 100 }] })).enabled).to.equal(true)
  })

  it('treats a group filter without any group type as reading no properties', () => {
    const definition = flag('orphan-group-filter', {
      groups: [{ properties: [{ key: 'name', value: 'x', type: 'group' }], rollout_percentage: 100 }],
    })
    expect(evaluateOne(definition, { personPropertyOverrides: { name: 'x' } }).enabled).to.equal(false)
  })
})
