import { expect } from 'chai'
import { explainFlags } from '../../../../plugins/decide/evaluator/explain.ts'
import { holdoutHash } from '../../../../plugins/decide/evaluator/hash.ts'
import { evaluateFlags, hashFor } from '../../../../plugins/decide/evaluator/index.ts'
import { isInRollout } from '../../../../plugins/decide/evaluator/rollout.ts'
import type { EvaluationInput, FlagDefinition } from '../../../../plugins/decide/evaluator/types.ts'
import { NOW, flag, simpleFlag } from './helpers.ts'

const base = (flags: FlagDefinition[], extra: Partial<EvaluationInput> = {}): EvaluationInput => ({
  flags,
  distinctId: 'user-1',
  database: { status: 'skipped' },
  now: NOW,
  ...extra,
})

/** A distinct id whose bucket for `key` is inside (or outside) `percentage`. */
function idInRollout(key: string, percentage: number, inside: boolean): string {
  for (let i = 0; ; i++) if (isInRollout(hashFor(key, `u${i}`), percentage) === inside) return `u${i}`
}

describe('evaluator: explanations (the admin dry run)', () => {
  it('answers exactly what the evaluation answers, for many users and every kind of flag', () => {
    const flags = [
      simpleFlag('rollout', { properties: [], rollout_percentage: 37 }),
      flag('multi', {
        groups: [
          { properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 80 },
          { properties: [], rollout_percentage: 20 },
        ],
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 50 },
            { key: 'b', rollout_percentage: 50 },
          ],
        },
        payloads: { a: '{"x":1}', b: '"b"' },
      }),
      simpleFlag('email', { properties: [{ key: 'email', value: '@acme', operator: 'icontains' }] }),
    ]
    for (let i = 0; i < 200; i++) {
      const input = base(flags, {
        distinctId: `person-${i}`,
        personPropertyOverrides: i % 3 === 0 ? { plan: 'pro', email: `p${i}@acme.com` } : { plan: 'free' },
      })
      const evaluated = evaluateFlags(input)
      const explained = explainFlags(input)
      for (const [key, result] of Object.entries(evaluated.flags)) {
        const explanation = explained.flags[key]
        expect(
          {
            enabled: explanation.enabled,
            variant: explanation.variant,
            payload: explanation.payload,
            reason: explanation.reason,
          },
          `${key} for person-${i}`,
        ).to.deep.equal({
          enabled: result.enabled,
          variant: result.variant,
          payload: result.metadata.payload,
          reason: result.reason,
        })
      }
    }
  })

  it('names the condition set that matched, with its description and the bucket within the rollout', () => {
    const definition = flag('two-sets', {
      groups: [
        { properties: [{ key: 'plan', value: ['enterprise'], operator: 'exact' }], rollout_percentage: 100 },
        { properties: [{ key: 'country', value: 'FR', operator: 'exact' }], rollout_percentage: 30 },
      ],
    })
    const id = idInRollout('two-sets', 30, true)
    const explained = explainFlags(base([definition], { distinctId: id, personPropertyOverrides: { country: 'FR' } }))
    const answer = explained.flags['two-sets']
    expect(answer).to.include({ enabled: true, value: true })
    expect(answer.reason).to.deep.include({ code: 'condition_match', condition_index: 1 })
    expect(answer.conditions[0]).to.deep.include({
      verdict: 'property_missing',
      reason: 'no_condition_match',
      description: 'plan exact ["enterprise"], rollout 100%',
    })
    expect(answer.conditions[1]).to.deep.include({ verdict: 'matched', description: 'country exact "FR", rollout 30%' })
    expect(answer.conditions[1].rollout?.bucket).to.be.at.most(30)
    expect(answer.detail).to.equal('condition set 2 matched (country exact "FR", rollout 30%)')
  })

  it('says a property is missing, or what value it had, and which filter stopped the set', () => {
    const definition = simpleFlag('pro-only', {
      properties: [
        { key: 'country', value: 'FR', operator: 'exact' },
        { key: 'plan', value: ['pro'], operator: 'exact' },
      ],
    })
    const missing = explainFlags(base([definition], { personPropertyOverrides: { country: 'FR' } })).flags['pro-only']
    expect(missing.conditions[0]).to.deep.include({
      verdict: 'property_missing',
      filter: { index: 1, type: 'person', key: 'plan', operator: 'exact', value: ['pro'] },
    })
    expect(missing.detail).to.match(
      /^No matching condition set; the closest was condition set 1: person property "plan" is not set/,
    )
    const other = explainFlags(base([definition], { personPropertyOverrides: { country: 'FR', plan: 'free' } })).flags[
      'pro-only'
    ]
    expect(other.conditions[0]).to.deep.include({ verdict: 'property_not_matched' })
    expect(other.conditions[0].filter).to.include({ key: 'plan', actual: 'free' })
    expect(other.conditions[0].detail).to.equal('person property "plan" is "free", which is not exact ["pro"]')
  })

  it('says when the identifier falls outside the rollout, with its bucket', () => {
    const definition = simpleFlag('thirty', { properties: [], rollout_percentage: 30 })
    const id = idInRollout('thirty', 30, false)
    const answer = explainFlags(base([definition], { distinctId: id })).flags.thirty
    expect(answer.reason.code).to.equal('out_of_rollout_bound')
    expect(answer.conditions[0].verdict).to.equal('out_of_rollout')
    expect(answer.conditions[0].rollout?.bucket).to.be.closeTo(hashFor('thirty', id) * 100, 0.0001)
    expect(answer.conditions[0].rollout?.bucket).to.be.above(30)
  })

  it('says which cohort the person is not in', () => {
    const definition = simpleFlag('cohorted', { properties: [{ key: 'id', value: 7, type: 'cohort', operator: 'in' }] })
    const cohorts = {
      '7': { id: 7, filters: { properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] } } },
    }
    const loaded = { status: 'loaded' as const, person: { properties: { plan: 'free' } } }
    const answer = explainFlags(base([definition], { cohorts, database: loaded })).flags.cohorted
    expect(answer.conditions[0]).to.deep.include({
      verdict: 'cohort_not_matched',
      detail: 'the person is not in cohort 7',
    })
    const member = explainFlags(
      base([definition], { cohorts, database: { status: 'loaded', person: { properties: { plan: 'pro' } } } }),
    ).flags.cohorted
    expect(member.conditions[0].verdict).to.equal('matched')
  })

  it('says a flag dependency is off, a group is not in the request, and a flag is disabled', () => {
    const off = flag('base', { groups: [{ properties: [], rollout_percentage: 0 }] }, { id: 501 })
    const dependent = simpleFlag('dependent', {
      properties: [{ key: '501', value: true, type: 'flag', operator: 'flag_evaluates_to' }],
    })
    const grouped = flag('grouped', {
      aggregation_group_type_index: 0,
      groups: [{ properties: [], rollout_percentage: 100 }],
    })
    const disabled = simpleFlag('disabled', { properties: [] }, { active: false })
    const explained = explainFlags(base([off, dependent, grouped, disabled], { groupTypeMapping: { '0': 'company' } }))
    expect(explained.flags.dependent.conditions[0]).to.deep.include({
      verdict: 'dependency_not_matched',
      detail: 'flag "base" is false; the condition needs it enabled',
    })
    expect(explained.flags.dependent.conditions[0].description).to.equal('flag "base" is enabled, rollout 100%')
    expect(explained.flags.grouped.conditions[0]).to.deep.include({
      verdict: 'group_not_provided',
      detail: 'the request names no company in its groups',
    })
    expect(explained.flags.disabled).to.deep.include({ enabled: false, value: false, conditions: [] })
    expect(explained.flags.disabled.reason.code).to.equal('flag_disabled')
  })

  it('names the missing flag a dependency points at', () => {
    const dangling = simpleFlag('dangling', {
      properties: [{ key: 'no-such-flag', value: true, type: 'flag', operator: 'flag_evaluates_to' }],
    })
    const answer = explainFlags(base([dangling])).flags.dangling
    expect(answer.reason.code).to.equal('missing_dependency')
    expect(answer.detail).to.equal('it depends on flag "no-such-flag", which does not exist')
  })

  it('reports the merged person and group properties the flags were matched against', () => {
    const explained = explainFlags(
      base([simpleFlag('any', { properties: [] })], {
        database: {
          status: 'loaded',
          person: { properties: { plan: 'pro', email: 'old@x' } },
          groupProperties: { 0: { size: 10 } },
        },
        personPropertyOverrides: { email: 'new@x' },
        groups: { company: 'acme' },
        groupPropertyOverrides: { company: { tier: 'gold' } },
        groupTypeMapping: { '0': 'company' },
      }),
    )
    expect(explained.person).to.include({ plan: 'pro', email: 'new@x', distinct_id: 'user-1' })
    expect(explained.groups).to.deep.equal({ company: { size: 10, tier: 'gold' } })
  })

  it('says a user is held out, with the holdout bucket, and says so for those not held out too', () => {
    const held = flag('held', {
      holdout: { id: 42, exclusion_percentage: 30 },
      groups: [{ properties: [], rollout_percentage: 100 }],
      payloads: { 'holdout-42': '"baseline"' },
    })
    let seen = 0
    for (let i = 0; i < 60; i++) {
      const distinctId = `u${i}`
      const bucket = holdoutHash(distinctId) * 100
      const answer = explainFlags(base([held], { distinctId })).flags.held
      const evaluated = evaluateFlags(base([held], { distinctId })).flags.held
      expect({ variant: answer.variant, reason: answer.reason }).to.deep.equal({
        variant: evaluated.variant,
        reason: evaluated.reason,
      })
      expect(answer.holdout).to.deep.include({ id: 42, exclusion_percentage: 30, held_out: bucket <= 30 })
      expect(answer.holdout?.bucket).to.be.closeTo(bucket, 0.0001)
      if (bucket <= 30) {
        seen++
        expect(answer).to.deep.include({ variant: 'holdout-42', value: 'holdout-42', payload: '"baseline"' })
        expect(answer.detail).to.match(
          /^held out: the identifier's holdout bucket [\d.]+ is within holdout 42's 30% exclusion, so it gets variant "holdout-42" and no condition set is evaluated$/,
        )
        expect(answer.conditions[0].verdict).to.equal('not_evaluated')
      } else {
        expect(answer.detail).to.match(
          /^condition set 1 matched .*\(not held out: holdout bucket [\d.]+ is above holdout 42's 30% exclusion\)$/,
        )
      }
    }
    expect(seen).to.be.within(5, 40)
    const everyone = flag('everyone', { holdout: { id: 7, exclusion_percentage: 150 }, groups: [] })
    expect(explainFlags(base([everyone])).flags.everyone.detail).to.equal(
      'held out: holdout 7 excludes everyone (100%), so it gets variant "holdout-7" and no condition set is evaluated',
    )
  })

  it('says which group a group flag needs when the request names none', () => {
    const grouped = flag('by-company', {
      aggregation_group_type_index: 0,
      groups: [
        {
          properties: [{ key: 'industry', value: ['tech'], operator: 'exact', type: 'group', group_type_index: 0 }],
          rollout_percentage: 100,
        },
      ],
    })
    const mapping = { groupTypeMapping: { '0': 'company', '1': 'team' } }
    const missing = explainFlags(base([grouped], { ...mapping, groups: { team: 'red' } })).flags['by-company']
    expect(missing.reason.code).to.equal('no_group_type')
    expect(missing.detail).to.equal(
      'the flag is evaluated per company and the request names no company in its groups: give the company key to evaluate it',
    )
    const named = explainFlags(base([grouped], { ...mapping, groups: { company: 'acme' } })).flags['by-company']
    expect(named.conditions[0]).to.deep.include({ verdict: 'property_missing' })
    expect(named.detail).to.match(/company property "industry" is not set/)
  })
})
