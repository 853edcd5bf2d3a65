import { expect } from 'chai'
import { holdoutHash } from '../../../../plugins/decide/evaluator/hash.ts'
import { evaluateOne, flag } from './helpers.ts'

function idWhere(test: (hash: number) => boolean): string {
  for (let i = 0; i < 10_000; i++) if (test(holdoutHash(`person-${i}`))) return `person-${i}`
  throw new Error('no such id')
}

describe('evaluator early access and holdouts (flags.md §6)', () => {
  describe('feature_enrollment (new format)', () => {
    const definition = flag('beta-feature', {
      feature_enrollment: true,
      groups: [{ properties: [], rollout_percentage: 0 }],
      payloads: { true: '"enrolled"' },
    })
    const superCondition = { code: 'super_condition_value', condition_index: 0, description: 'Super condition value' }

    it('enables the flag when $feature_enrollment/<key> is true or "true"', () => {
      for (const value of [true, 'true']) {
        const result = evaluateOne(definition, {
          personPropertyOverrides: { '$feature_enrollment/beta-feature': value },
        })
        expect(result.enabled).to.equal(true)
        expect(result.variant).to.equal(null)
        expect(result.reason).to.deep.equal(superCondition)
        expect(result.metadata.payload).to.equal('"enrolled"')
      }
    })

    it('disables it for any other present value, still with the "true" payload', () => {
      for (const value of [false, 'false', 'True', 1, null]) {
        const result = evaluateOne(definition, {
          personPropertyOverrides: { '$feature_enrollment/beta-feature': value },
        })
        expect(result.enabled, String(value)).to.equal(false)
        expect(result.reason).to.deep.equal(superCondition)
        expect(result.metadata.payload).to.equal('"enrolled"')
      }
    })

    it('falls through to the condition sets when the property is absent', () => {
      const result = evaluateOne(definition)
      expect(result.reason.code).to.equal('out_of_rollout_bound')
    })

    it('uses person properties even for group flags', () => {
      const groupFlag = flag('group-beta', { feature_enrollment: true, aggregation_group_type_index: 0, groups: [] })
      const result = evaluateOne(groupFlag, { personPropertyOverrides: { '$feature_enrollment/group-beta': true } })
      expect(result.enabled).to.equal(true)
    })

    it('takes precedence over super_groups', () => {
      const both = flag('both', {
        feature_enrollment: true,
        super_groups: [
          {
            properties: [{ key: 'other', value: ['true'], operator: 'exact', type: 'person' }],
            rollout_percentage: 100,
          },
        ],
        groups: [],
      })
      expect(evaluateOne(both, { personPropertyOverrides: { other: 'true' } }).reason.code).to.equal('no_group_type')
    })
  })

  describe('super_groups (legacy format)', () => {
    const enrollment = { key: '$feature_enrollment/legacy', value: ['true'], operator: 'exact', type: 'person' }
    const definition = flag('legacy', {
      super_groups: [{ properties: [enrollment], rollout_percentage: 100 }],
      groups: [{ properties: [], rollout_percentage: 100 }],
    })

    it('decides when one of its keys is present, like a normal condition', () => {
      const enrolled = evaluateOne(definition, { personPropertyOverrides: { '$feature_enrollment/legacy': true } })
      expect(enrolled.enabled).to.equal(true)
      expect(enrolled.reason.code).to.equal('super_condition_value')
      const optedOut = evaluateOne(definition, { personPropertyOverrides: { '$feature_enrollment/legacy': false } })
      expect(optedOut.enabled).to.equal(false)
      expect(optedOut.reason).to.deep.equal({
        code: 'super_condition_value',
        condition_index: 0,
        description: 'Super condition value',
      })
    })

    it('falls through when none of its keys is present', () => {
      expect(evaluateOne(definition).reason.code).to.equal('condition_match')
    })

    it('applies its rollout', () => {
      const zero = flag('legacy-zero', {
        super_groups: [{ properties: [enrollment], rollout_percentage: 0 }],
        groups: [],
      })
      const result = evaluateOne(zero, { personPropertyOverrides: { '$feature_enrollment/legacy': true } })
      expect(result.enabled).to.equal(false)
      expect(result.reason.code).to.equal('super_condition_value')
    })

    it('only looks at the first super group, and ignores one without filters', () => {
      const second = flag('legacy-second', {
        super_groups: [
          { properties: [], rollout_percentage: 100 },
          { properties: [enrollment], rollout_percentage: 100 },
        ],
        groups: [{ properties: [], rollout_percentage: 0 }],
      })
      expect(
        evaluateOne(second, { personPropertyOverrides: { '$feature_enrollment/legacy': true } }).reason.code,
      ).to.equal('out_of_rollout_bound')
    })
  })

  describe('holdout', () => {
    const held = idWhere((hash) => hash <= 0.3)
    const kept = idWhere((hash) => hash > 0.3)
    const definition = flag('experiment', {
      holdout: { id: 42, exclusion_percentage: 30 },
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 100 }] },
      payloads: { 'holdout-42': '{"held":true}', control: '"c"' },
    })

    it('gives held-out users the holdout variant, its payload and no condition index', () => {
      const result = evaluateOne(definition, { distinctId: held })
      expect(result.enabled).to.equal(true)
      expect(result.variant).to.equal('holdout-42')
      expect(result.reason).to.deep.equal({
        code: 'holdout_condition_value',
        condition_index: null,
        description: 'Holdout condition value',
      })
      expect(result.metadata.payload).to.equal('{"held":true}')
    })

    it('evaluates the others normally', () => {
      const result = evaluateOne(definition, { distinctId: kept })
      expect(result.variant).to.equal('control')
      expect(result.reason.code).to.equal('condition_match')
    })

    it('holds out the same people from every flag sharing the holdout', () => {
      const other = flag('other-experiment', {
        holdout: { id: 42, exclusion_percentage: 30 },
        groups: [{ properties: [], rollout_percentage: 100 }],
      })
      expect(evaluateOne(other, { distinctId: held }).variant).to.equal('holdout-42')
    })

    it('clamps the exclusion percentage: 100 or more holds everyone out, 0 or less nobody', () => {
      const all = flag('all-held', { holdout: { id: 7, exclusion_percentage: 150 }, groups: [] })
      const none = flag('none-held', { holdout: { id: 7, exclusion_percentage: -5 }, groups: [] })
      expect(evaluateOne(all, { distinctId: kept }).variant).to.equal('holdout-7')
      expect(evaluateOne(none, { distinctId: held }).enabled).to.equal(false)
    })

    it('hashes $anon_distinct_id for continuity flags but not stored overrides', () => {
      const continuity = flag(
        'continuity-holdout',
        { holdout: { id: 9, exclusion_percentage: 30 }, groups: [] },
        { ensure_experience_continuity: true },
      )
      expect(evaluateOne(continuity, { distinctId: kept, anonDistinctId: held }).variant).to.equal('holdout-9')
      const stored = evaluateOne(continuity, { distinctId: kept, hashKeyOverrides: { 'continuity-holdout': held } })
      expect(stored.variant).to.equal(null)
    })
  })
})
