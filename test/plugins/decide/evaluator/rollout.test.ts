import { expect } from 'chai'
import { hashFor } from '../../../../plugins/decide/evaluator/hash.ts'
import { isInRollout, selectVariant } from '../../../../plugins/decide/evaluator/rollout.ts'
import { evaluateOne, flag, simpleFlag, valueOf } from './helpers.ts'

/** The first of distinct_id_0… whose rollout hash for `key` satisfies the test. */
function idWhere(key: string, test: (hash: number) => boolean, salt = ''): string {
  for (let i = 0; i < 100_000; i++) if (test(hashFor(key, `distinct_id_${i}`, salt))) return `distinct_id_${i}`
  throw new Error('no such id')
}

describe('evaluator rollout and variants (flags.md §2)', () => {
  it('puts a user in when hash ≤ rollout / 100', () => {
    expect(isInRollout(0.45, 45)).to.equal(true)
    expect(isInRollout(0.4500001, 45)).to.equal(false)
  })

  it('treats a null rollout as 100: everyone is in', () => {
    const definition = simpleFlag('null-rollout', { properties: [], rollout_percentage: null })
    for (let i = 0; i < 50; i++) expect(evaluateOne(definition, { distinctId: `u${i}` }).enabled).to.equal(true)
  })

  it('lets no one into a 0% rollout', () => {
    const definition = simpleFlag('zero-rollout', { properties: [], rollout_percentage: 0 })
    for (let i = 0; i < 50; i++) {
      const result = evaluateOne(definition, { distinctId: `u${i}` })
      expect(result.enabled).to.equal(false)
      expect(result.reason).to.deep.equal({
        code: 'out_of_rollout_bound',
        condition_index: 0,
        description: 'Out of rollout bound',
      })
    }
  })

  it('keeps fractional percentages: 0.1 is a real 0.1% bucket', () => {
    const inside = idWhere('tiny-rollout', (hash) => hash <= 0.001)
    const outside = idWhere('tiny-rollout', (hash) => hash > 0.001 && hash <= 0.01)
    const definition = simpleFlag('tiny-rollout', { properties: [], rollout_percentage: 0.1 })
    expect(evaluateOne(definition, { distinctId: inside }).enabled).to.equal(true)
    expect(evaluateOne(definition, { distinctId: outside }).enabled).to.equal(false)
  })

  it('walks variants in stored order with a strict < on the running sum', () => {
    const variants = [
      { key: 'a', rollout_percentage: 50 },
      { key: 'b', rollout_percentage: 50 },
    ]
    expect(selectVariant(variants, 0)).to.equal('a')
    expect(selectVariant(variants, 0.4999)).to.equal('a')
    expect(selectVariant(variants, 0.5)).to.equal('b')
    expect(selectVariant([...variants].reverse(), 0.2)).to.equal('b')
  })

  it('leaves no variant when weights sum under 100, so the value is plain true', () => {
    const key = 'partial-variants'
    const gapUser = idWhere(key, (hash) => hash >= 0.2, 'variant')
    const definition = flag(key, {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: 10 },
          { key: 'b', rollout_percentage: 10 },
        ],
      },
    })
    const result = evaluateOne(definition, { distinctId: gapUser })
    expect(result.enabled).to.equal(true)
    expect(result.variant).to.equal(null)
    expect(valueOf(result)).to.equal(true)
  })

  it('reproduces the worked example: distinct_id_0 gets second-variant of the 55% flag', () => {
    const definition = flag('multivariate-flag', {
      groups: [{ properties: [], rollout_percentage: 55 }],
      multivariate: {
        variants: [
          { key: 'first-variant', rollout_percentage: 50 },
          { key: 'second-variant', rollout_percentage: 20 },
          { key: 'third-variant', rollout_percentage: 20 },
          { key: 'fourth-variant', rollout_percentage: 5 },
          { key: 'fifth-variant', rollout_percentage: 5 },
        ],
      },
    })
    expect(valueOf(evaluateOne(definition, { distinctId: 'distinct_id_0' }))).to.equal('second-variant')
    expect(valueOf(evaluateOne(definition, { distinctId: 'distinct_id_2' }))).to.equal('first-variant')
    expect(valueOf(evaluateOne(definition, { distinctId: 'distinct_id_3' }))).to.equal(false)
  })

  describe('variant overrides', () => {
    const variants = [
      { key: 'control', rollout_percentage: 50 },
      { key: 'test', rollout_percentage: 50 },
    ]

    it("uses a set's variant when it names one of the flag's variants", () => {
      const definition = flag('override', {
        groups: [{ properties: [], rollout_percentage: 100, variant: 'test' }],
        multivariate: { variants },
      })
      for (let i = 0; i < 20; i++) expect(evaluateOne(definition, { distinctId: `u${i}` }).variant).to.equal('test')
    })

    it('falls back to the hashed variant when the override names no variant', () => {
      const definition = flag('bad-override', {
        groups: [{ properties: [], rollout_percentage: 100, variant: 'nope' }],
        multivariate: { variants },
      })
      const expected = selectVariant(variants, hashFor('bad-override', 'u1', 'variant'))
      expect(evaluateOne(definition, { distinctId: 'u1' }).variant).to.equal(expected)
    })
  })
})
