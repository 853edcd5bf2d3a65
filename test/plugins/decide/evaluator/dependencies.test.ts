import { expect } from 'chai'
import { planDependencies } from '../../../../plugins/decide/evaluator/dependencies.ts'
import type { FlagDefinition } from '../../../../plugins/decide/evaluator/types.ts'
import { evaluate, flag } from './helpers.ts'

const dependsOn = (key: string, value: unknown, operator = 'flag_evaluates_to') => ({
  key,
  value,
  operator,
  type: 'flag',
})
const always = (key: string, extra: Partial<FlagDefinition> = {}) =>
  flag(key, { groups: [{ properties: [], rollout_percentage: 100 }] }, extra)
const never = (key: string, extra: Partial<FlagDefinition> = {}) =>
  flag(key, { groups: [{ properties: [], rollout_percentage: 0 }] }, extra)
const gated = (key: string, ...filters: ReturnType<typeof dependsOn>[]) =>
  flag(key, { groups: [{ properties: filters, rollout_percentage: 100 }] })
const variantFlag = (key: string, variant: string) =>
  flag(key, {
    groups: [{ properties: [], rollout_percentage: 100 }],
    multivariate: { variants: [{ key: variant, rollout_percentage: 100 }] },
  })

describe('evaluator flag dependencies (flags.md §8b)', () => {
  it('matches true against any enabled value, variants included', () => {
    const parent = variantFlag('parent', 'blue')
    const child = gated('child', dependsOn(String(parent.id), true))
    expect(evaluate([child, parent]).flags.child.enabled).to.equal(true)
  })

  it('matches false only against false', () => {
    const off = never('off')
    const on = always('on')
    const flags = [
      gated('needs-off', dependsOn(String(off.id), false)),
      gated('needs-on-false', dependsOn(String(on.id), false)),
      off,
      on,
    ]
    const result = evaluate(flags).flags
    expect(result['needs-off'].enabled).to.equal(true)
    expect(result['needs-on-false'].enabled).to.equal(false)
  })

  it('matches a string only against that exact variant', () => {
    const parent = variantFlag('colour', 'blue')
    const flags = [
      gated('is-blue', dependsOn(String(parent.id), 'blue')),
      gated('is-Blue', dependsOn(String(parent.id), 'Blue')),
      parent,
    ]
    const result = evaluate(flags).flags
    expect(result['is-blue'].enabled).to.equal(true)
    expect(result['is-Blue'].enabled).to.equal(false)
  })

  it('never matches with another operator or value type', () => {
    const parent = always('p')
    const flags = [
      gated('wrong-operator', dependsOn(String(parent.id), true, 'exact')),
      gated('number-value', dependsOn(String(parent.id), 1)),
      parent,
    ]
    const result = evaluate(flags).flags
    expect(result['wrong-operator'].enabled).to.equal(false)
    expect(result['number-value'].enabled).to.equal(false)
  })

  it('resolves SDK-format dependencies by key', () => {
    const parent = always('by-key-parent')
    const child = flag('by-key-child', {
      groups: [
        {
          properties: [{ ...dependsOn('by-key-parent', true), dependency_chain: ['by-key-parent'] }],
          rollout_percentage: 100,
        },
      ],
    })
    expect(evaluate([child, parent]).flags['by-key-child'].enabled).to.equal(true)
  })

  it('counts an inactive or deleted dependency as false, and leaves it out of the response', () => {
    const inactive = always('inactive', { active: false })
    const deleted = always('deleted', { deleted: true })
    const flags = [
      gated('needs-inactive-false', dependsOn(String(inactive.id), false)),
      gated('needs-deleted-true', dependsOn(String(deleted.id), true)),
      inactive,
      deleted,
    ]
    const result = evaluate(flags)
    expect(result.flags['needs-inactive-false'].enabled).to.equal(true)
    expect(result.flags['needs-deleted-true'].enabled).to.equal(false)
    expect(result.flags).to.not.have.any.keys('inactive', 'deleted')
    expect(result.errorsWhileComputingFlags).to.equal(false)
  })

  it('answers missing_dependency for a dependency that does not exist, and its dependents, without an error', () => {
    const orphan = gated('orphan', dependsOn('999999', true))
    const grandchild = gated('grandchild', dependsOn(String(orphan.id), false))
    const result = evaluate([grandchild, orphan])
    const missing = {
      code: 'missing_dependency',
      condition_index: null,
      description: 'Flag cannot be evaluated due to missing dependency',
    }
    expect(result.flags.orphan.reason).to.deep.equal(missing)
    expect(result.flags.orphan.enabled).to.equal(false)
    expect(result.flags.grandchild.reason).to.deep.equal(missing)
    expect(result.errorsWhileComputingFlags).to.equal(false)
  })

  it('answers missing_dependency for a cycle and its dependents, and flags an error', () => {
    const a = flag('a', { groups: [] })
    const b = gated('b', dependsOn(String(a.id), true))
    a.filters.groups = [{ properties: [dependsOn(String(b.id), true)], rollout_percentage: 100 }]
    const c = gated('c', dependsOn(String(b.id), false))
    const free = always('free')
    const result = evaluate([a, b, c, free])
    for (const key of ['a', 'b', 'c']) expect(result.flags[key].reason.code, key).to.equal('missing_dependency')
    expect(result.flags.free.enabled).to.equal(true)
    expect(result.errorsWhileComputingFlags).to.equal(true)
  })

  it('evaluates dependencies first, whatever the stored order', () => {
    const grandparent = always('gp')
    const parent = gated('p2', dependsOn(String(grandparent.id), true))
    const child = gated('c2', dependsOn(String(parent.id), true))
    const plan = planDependencies([child, parent, grandparent])
    expect(plan.stages.map((stage) => stage.map((f) => f.key))).to.deep.equal([['gp'], ['p2'], ['c2']])
    expect(evaluate([child, parent, grandparent]).flags.c2.enabled).to.equal(true)
  })

  it('evaluates requested keys and their dependencies only', () => {
    const parent = always('dep')
    const child = gated('wanted', dependsOn(String(parent.id), true))
    const result = evaluate([child, parent, always('unwanted')], { flagKeys: ['wanted', 'not-a-flag'] })
    expect(Object.keys(result.flags).sort()).to.deep.equal(['dep', 'wanted'])
    expect(result.flags.wanted.enabled).to.equal(true)
  })

  it('sees a failed dependency as having no value, so neither true nor false matches', () => {
    const broken = flag('broken', {
      groups: [{ properties: [{ key: 'id', value: 404, type: 'cohort' }], rollout_percentage: 100 }],
    })
    const flags = [
      broken,
      gated('wants-true', dependsOn(String(broken.id), true)),
      gated('wants-false', dependsOn(String(broken.id), false)),
    ]
    const result = evaluate(flags, { database: { status: 'loaded', person: null }, cohorts: [] })
    expect(result.flags.broken.failed).to.equal(true)
    expect(result.flags['wants-true'].enabled).to.equal(false)
    expect(result.flags['wants-false'].enabled).to.equal(false)
  })
})
