import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT_DIR } from '../../helpers/service.ts'

type Json = Record<string, any>
// a browser module without types: loaded as it is served
const model = (await import(pathToFileURL(path.join(ROOT_DIR, 'plugins/console/public/flag-model.js')).href)) as Json

/** The operators the evaluator matches person and group properties with (its switch, and the two set checks). */
function evaluatorOperators(): Set<string> {
  const source = readFileSync(path.join(ROOT_DIR, 'plugins/decide/evaluator/properties/match-property.ts'), 'utf8')
  const cases = [...source.matchAll(/case '([a-z_]+)':/g)].map((m) => m[1])
  return new Set([...cases, 'is_set', 'is_not_set'])
}

describe('console flag model', () => {
  it('offers for property filters only operators the evaluator matches, and for cohorts and flags only theirs', () => {
    const known = evaluatorOperators()
    for (const type of ['person', 'group']) {
      const offered = model.operatorsFor(type).map(([operator]: [string]) => operator)
      expect(
        offered.filter((operator: string) => !known.has(operator)),
        type,
      ).to.deep.equal([])
      expect(offered).to.include.members(['exact', 'is_not', 'icontains', 'regex', 'gt', 'is_set'])
    }
    expect(model.operatorsFor('cohort').map(([o]: [string]) => o)).to.deep.equal(['in', 'not_in'])
    expect(model.operatorsFor('flag').map(([o]: [string]) => o)).to.deep.equal(['flag_evaluates_to'])
  })

  it('reshapes the value when the operator changes: lists for exact/is_not, the name for is_set, text otherwise', () => {
    const filter = { type: 'person', key: 'plan', operator: 'icontains', value: 'pro' }
    expect(model.withOperator(filter, 'exact').value).to.deep.equal(['pro'])
    expect(model.withOperator({ ...filter, operator: 'exact', value: ['a', 'b'] }, 'icontains').value).to.equal('a')
    expect(model.withOperator(filter, 'is_set').value).to.equal('is_set')
    expect(model.withOperator({ ...filter, operator: 'is_set', value: 'is_set' }, 'exact').value).to.deep.equal([])
  })

  it('finds before saving: weights not summing to 100, payloads that are not JSON, variants without a key, bad rollouts', () => {
    const flag = {
      key: 'ok-key',
      filters: {
        groups: [{ properties: [{ type: 'person', key: '', operator: 'exact', value: [] }], rollout_percentage: 130 }],
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 50 },
            { key: '', rollout_percentage: 30 },
          ],
        },
      },
    }
    expect(model.localErrors(flag, { a: '{"x": 1', b: '' })).to.have.all.keys(
      'filters.multivariate',
      'filters.multivariate.variants.1.key',
      'filters.payloads.a',
      'filters.groups.0.rollout_percentage',
      'filters.groups.0.properties.0.key',
    )
    expect(model.localErrors({ ...flag, key: 'bad key!', filters: { groups: [] } }, {})).to.have.all.keys('key')
  })

  it('summarises rollouts as the flag list shows them', () => {
    const summary = model.rolloutSummary({
      filters: {
        groups: [
          { properties: [{}], rollout_percentage: 30 },
          { properties: [], rollout_percentage: null },
        ],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'test', rollout_percentage: 50 },
          ],
        },
      },
    })
    expect(summary).to.equal('30% of users matching 1 filter; 100% of everyone; variants control 50 / test 50')
    expect(model.rolloutSummary({ filters: { groups: [] } })).to.equal('no condition set: off for everyone')
    const held = {
      filters: { groups: [{ properties: [], rollout_percentage: 100 }], holdout: { id: 7, exclusion_percentage: 35 } },
    }
    expect(model.rolloutSummary(held)).to.equal('35% held out (holdout 7); 100% of everyone')
    held.filters.groups = []
    expect(model.rolloutSummary(held)).to.equal('35% held out (holdout 7); no condition set: off for everyone else')
  })

  it('sends payloads as compact JSON text, only for the variants that exist', () => {
    const flag = { filters: { multivariate: { variants: [{ key: 'a' }] } } }
    expect(model.withPayloads(flag, { a: ' { "x" : 1 } ', gone: '2' }).filters.payloads).to.deep.equal({ a: '{"x":1}' })
    expect(model.withPayloads({ filters: {} }, { true: '[1, 2]' }).filters.payloads).to.deep.equal({ true: '[1,2]' })
  })

  it('finds the flags whose condition sets name a cohort, by its id as number or string', () => {
    const flag = (key: string, properties: Json[][]) => ({
      key,
      filters: { groups: properties.map((p) => ({ properties: p, rollout_percentage: 100 })) },
    })
    const flags = [
      flag('in-second-set', [
        [{ type: 'person', key: 'plan', value: ['7'] }],
        [{ type: 'cohort', key: 'id', value: 7 }],
      ]),
      flag('as-string', [[{ type: 'cohort', key: 'id', value: '7' }]]),
      flag('other-cohort', [[{ type: 'cohort', key: 'id', value: 17 }]]),
      flag('person-value-7', [[{ type: 'person', key: 'id', value: 7 }]]),
      { key: 'no-filters' },
    ]
    expect(model.flagsUsingCohort(flags, 7).map((f: Json) => f.key)).to.deep.equal(['in-second-set', 'as-string'])
  })

  it('checks a holdout: a whole-number id and a share between 0 and 100; none is no error', () => {
    const flag = (holdout: unknown) => ({ key: 'k', filters: { groups: [], holdout } })
    expect(model.localErrors(flag(null), {})).to.deep.equal({})
    expect(model.localErrors(flag({ id: 3, exclusion_percentage: 0 }), {})).to.deep.equal({})
    expect(model.localErrors(flag({ id: 3, exclusion_percentage: 100 }), {})).to.deep.equal({})
    expect(model.localErrors(flag({ id: null, exclusion_percentage: 101 }), {})).to.have.all.keys(
      'filters.holdout.id',
      'filters.holdout.exclusion_percentage',
    )
    expect(model.localErrors(flag({ id: 2.5, exclusion_percentage: -1 }), {})).to.have.all.keys(
      'filters.holdout.id',
      'filters.holdout.exclusion_percentage',
    )
  })

  it("keeps the held-out users' payload (variant holdout-<id>) while the flag has that holdout", () => {
    const held = { filters: { holdout: { id: 4, exclusion_percentage: 20 } } }
    const texts = { true: '1', 'holdout-4': ' {"baseline": true} ', 'holdout-5': '2' }
    expect(model.withPayloads(held, texts).filters.payloads).to.deep.equal({
      true: '1',
      'holdout-4': '{"baseline":true}',
    })
    expect(model.withPayloads({ filters: { holdout: null } }, texts).filters.payloads).to.deep.equal({ true: '1' })
  })

  it("puts the API's holdout errors (attr as admin-evaluate.test.ts sees them) at the holdout fields", () => {
    expect(model.fieldPathOf('filters.holdout.exclusion_percentage')).to.equal('filters.holdout.exclusion_percentage')
    expect(model.fieldPathOf('filters.holdout.id')).to.equal('filters.holdout.id')
    expect(model.fieldPathOf('filters.holdout')).to.equal('filters.holdout.id')
    expect(model.controlOf('filters.holdout.exclusion_percentage')).to.equal('holdout-exclusion')
    expect(model.controlOf('filters.holdout.id')).to.equal('holdout-id')
    const fields = readFileSync(path.join(ROOT_DIR, 'plugins/console/public/pages/flag-holdout.js'), 'utf8')
    expect(fields).to.contain('id="holdout-exclusion"').and.contain('id="holdout-id"')
    // the paths are the ones the local checks use, so one message shows per field
    const local = model.localErrors(
      { key: 'k', filters: { groups: [], holdout: { id: null, exclusion_percentage: 101 } } },
      {},
    )
    expect(Object.keys(local).map(model.fieldPathOf)).to.deep.equal(Object.keys(local))
  })
})
