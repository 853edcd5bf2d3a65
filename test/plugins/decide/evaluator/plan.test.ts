import { expect } from 'chai'
import { planEvaluation } from '../../../../plugins/decide/evaluator/plan.ts'
import { prepareFlags } from '../../../../plugins/decide/evaluator/prepared.ts'
import {
  flagNeedsHashKeyOverride,
  flagRequiresDatabase,
  propertyNeeds,
} from '../../../../plugins/decide/evaluator/requirements.ts'
import { flag } from './helpers.ts'

const person = (key: string) => ({ key, value: 'x', type: 'person' })

describe('evaluator storage needs (flags.md §7.1, §11, §4.3)', () => {
  describe('flagRequiresDatabase', () => {
    it('is false for rollout-only flags and for flags whose properties are all in the overrides', () => {
      expect(flagRequiresDatabase(flag('r', { groups: [{ properties: [], rollout_percentage: 30 }] }), {})).to.equal(
        false,
      )
      const props = flag('p', {
        groups: [{ properties: [person('a'), person('b')], rollout_percentage: 100 }, { properties: [person('c')] }],
      })
      expect(flagRequiresDatabase(props, { a: 1, b: 2 })).to.equal(true)
      expect(flagRequiresDatabase(props, { a: 1, b: 2, c: 3 })).to.equal(false)
    })

    it('ignores sets rolled out to 0%', () => {
      const zero = flag('z', {
        groups: [{ properties: [person('a'), { key: 'id', value: 1, type: 'cohort' }], rollout_percentage: 0 }],
      })
      expect(flagRequiresDatabase(zero, {})).to.equal(false)
    })

    it('is true for cohorts, group aggregation and unanswered enrollment', () => {
      expect(
        flagRequiresDatabase(flag('c', { groups: [{ properties: [{ key: 'id', value: 1, type: 'cohort' }] }] }), {}),
      ).to.equal(true)
      expect(flagRequiresDatabase(flag('g', { aggregation_group_type_index: 1, groups: [] }), {})).to.equal(true)
      const enrollment = flag('e', { feature_enrollment: true, groups: [] })
      expect(flagRequiresDatabase(enrollment, {})).to.equal(true)
      expect(flagRequiresDatabase(enrollment, { '$feature_enrollment/e': true })).to.equal(false)
    })

    it('never needs the database for flag dependencies', () => {
      expect(
        flagRequiresDatabase(
          flag('d', {
            groups: [{ properties: [{ key: '5', value: true, operator: 'flag_evaluates_to', type: 'flag' }] }],
          }),
          {},
        ),
      ).to.equal(false)
    })
  })

  it('lists the property keys, group types, cohorts and dependencies a flag reads', () => {
    const definition = flag('needs', {
      feature_enrollment: true,
      groups: [
        {
          properties: [
            person('email'),
            { key: 'created_at', value: '-1d', operator: 'is_date_after', type: 'person_metadata' },
          ],
        },
        {
          properties: [
            { key: 'plan', value: 'x', type: 'group', group_type_index: 1 },
            { key: 'id', value: '7', type: 'cohort' },
          ],
        },
        {
          properties: [{ key: 'dep', value: true, operator: 'flag_evaluates_to', type: 'flag' }],
          aggregation_group_type_index: 2,
        },
      ],
    })
    expect(propertyNeeds(definition)).to.deep.equal({
      person: ['$feature_enrollment/needs', 'email', '__posthog_person_metadata__created_at'],
      groups: { 1: ['plan'] },
      cohortIds: [7],
      groupTypeIndexes: [1, 2],
      flagDependencies: ['dep'],
    })
  })

  it('needs hash-key overrides only for continuity flags whose outcome depends on the hash', () => {
    expect(
      flagNeedsHashKeyOverride(
        flag('a', { groups: [{ rollout_percentage: 100 }] }, { ensure_experience_continuity: true }),
      ),
    ).to.equal(false)
    expect(
      flagNeedsHashKeyOverride(
        flag('b', { groups: [{ rollout_percentage: 50 }] }, { ensure_experience_continuity: true }),
      ),
    ).to.equal(true)
    expect(
      flagNeedsHashKeyOverride(
        flag(
          'c',
          { groups: [{}], multivariate: { variants: [{ key: 'x', rollout_percentage: 100 }] } },
          { ensure_experience_continuity: true },
        ),
      ),
    ).to.equal(true)
    expect(flagNeedsHashKeyOverride(flag('d', { groups: [{ rollout_percentage: 50 }] }))).to.equal(false)
  })

  describe('planEvaluation', () => {
    const continuity = flag('cont', { groups: [{ rollout_percentage: 50 }] }, { ensure_experience_continuity: true })
    const idle = flag(
      'idle-cont',
      { groups: [{ rollout_percentage: 50 }] },
      { ensure_experience_continuity: true, active: false },
    )
    const group = flag('grp', { aggregation_group_type_index: 0, groups: [{}] })
    const plain = flag('plain', { groups: [{ properties: [person('plan')] }] })

    it('asks for the database only when some flag needs it', () => {
      expect(
        planEvaluation({ flags: [plain], distinctId: 'u', personPropertyOverrides: { plan: 'x' } }).needsDatabase,
      ).to.equal(false)
      const plan = planEvaluation({ flags: [plain, group], distinctId: 'u', personPropertyOverrides: { plan: 'x' } })
      expect(plan.needsDatabase).to.equal(true)
      expect(plan.databaseFlagKeys).to.deep.equal(['grp'])
      expect(plan.groupTypeIndexes).to.deep.equal([0])
      expect(plan.needsGroupTypeMapping).to.equal(true)
    })

    it('plans each request of one prepared selection by its own overrides, and hands out its own key lists', () => {
      const flags = [plain, group, flag('city', { groups: [{ properties: [person('city')] }] })]
      const prepared = prepareFlags(flags)
      const plan = (overrides: Record<string, unknown> | null) =>
        planEvaluation({ flags, prepared, distinctId: 'u', personPropertyOverrides: overrides })
      const first = plan({ plan: 'x' })
      expect(first.databaseFlagKeys).to.have.members(['grp', 'city'])
      first.flagKeys.push('changed by a caller')
      first.databaseFlagKeys.length = 0
      expect(plan({ plan: 'x', city: 'Paris' }).databaseFlagKeys).to.deep.equal(['grp'])
      // planned afresh (definitions prepared anew): what the kept selection must still answer
      const fresh = (overrides: Record<string, unknown> | null) =>
        planEvaluation({ flags, distinctId: 'u', personPropertyOverrides: overrides })
      expect(plan(null)).to.deep.equal(fresh(null))
      expect(plan(null).databaseFlagKeys).to.have.members(['plain', 'grp', 'city'])
      expect(plan({ plan: 'x' })).to.deep.equal(fresh({ plan: 'x' }))
    })

    it('looks up overrides for the distinct id, and writes the anon id for every active continuity flag', () => {
      const withoutAnon = planEvaluation({ flags: [continuity, idle, plain], distinctId: 'user' })
      expect(withoutAnon.hashKeyOverrides).to.deep.equal({ lookup: ['user'], write: null })
      const withAnon = planEvaluation({ flags: [continuity, idle, plain], distinctId: 'user', anonDistinctId: 'anon' })
      expect(withAnon.hashKeyOverrides).to.deep.equal({
        lookup: ['user', 'anon'],
        write: { hashKey: 'anon', distinctIds: ['user', 'anon'], flagKeys: ['cont'] },
      })
    })

    it('skips the override lookup when no evaluated flag depends on it', () => {
      const plan = planEvaluation({
        flags: [continuity, plain],
        flagKeys: ['plain'],
        distinctId: 'user',
        anonDistinctId: 'anon',
      })
      expect(plan.flagKeys).to.deep.equal(['plain'])
      expect(plan.hashKeyOverrides).to.deep.equal({ lookup: null, write: null })
    })
  })
})
