import { expect } from 'chai'
import { evaluateFlags } from '../../../../plugins/decide/evaluator/evaluate.ts'
import { planEvaluation } from '../../../../plugins/decide/evaluator/plan.ts'
import { prepareFlags } from '../../../../plugins/decide/evaluator/prepared.ts'
import type { EvaluationInput, FlagDefinition } from '../../../../plugins/decide/evaluator/types.ts'
import { flag, NOW, simpleFlag } from './helpers.ts'

function definitions(): FlagDefinition[] {
  const base = simpleFlag('base', {
    properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }],
    rollout_percentage: 60,
  })
  return [
    base,
    simpleFlag('depends', {
      properties: [{ key: String(base.id), type: 'flag', operator: 'flag_evaluates_to', value: true }],
      rollout_percentage: 100,
    }),
    flag('multi', {
      groups: [{ properties: [], rollout_percentage: 80 }],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: 50 },
          { key: 'b', rollout_percentage: 50 },
        ],
      },
      payloads: { a: '{"x":1}' },
    }),
    flag('group', {
      aggregation_group_type_index: 0,
      groups: [
        {
          properties: [{ key: 'size', operator: 'gt', value: 10, type: 'group', group_type_index: 0 }],
          rollout_percentage: 50,
        },
      ],
    }),
    simpleFlag('broken', { properties: 'not a list' as never }),
    simpleFlag('missing-dependency', {
      properties: [{ key: 'nope', type: 'flag', operator: 'flag_evaluates_to', value: true }],
    }),
  ]
}

function input(flags: FlagDefinition[], distinctId: string, extra: Partial<EvaluationInput> = {}): EvaluationInput {
  return {
    flags,
    distinctId,
    personPropertyOverrides: { plan: distinctId.endsWith('1') ? 'pro' : 'free' },
    groups: { company: `c-${distinctId}` },
    groupTypeMapping: { 0: 'company' },
    database: { status: 'loaded', person: null, groupProperties: { 0: { size: 20 } } },
    now: NOW,
    ...extra,
  }
}

describe('evaluator prepareFlags', () => {
  it('gives every request the answers and the plan it gets without preparation', () => {
    const flags = definitions()
    const prepared = prepareFlags(flags)
    for (let i = 0; i < 200; i++) {
      for (const flagKeys of [null, ['depends'], ['multi', 'nope']]) {
        const request = input(flags, `user-${i}`, { flagKeys })
        expect(evaluateFlags({ ...request, prepared })).to.deep.equal(evaluateFlags(request))
        expect(planEvaluation({ ...request, prepared })).to.deep.equal(planEvaluation(request))
      }
    }
  })

  it('is ignored when it was built from another array of definitions', () => {
    const flags = definitions()
    const stale = prepareFlags(flags.slice(0, 1))
    const result = evaluateFlags({ ...input(flags, 'user-1'), prepared: stale })
    expect(Object.keys(result.flags)).to.have.members(flags.map((f) => f.key))
  })

  it('shares one frozen answer per outcome between requests, and never one of another outcome', () => {
    const flags = definitions()
    const prepared = prepareFlags(flags)
    const seen = new Map<string, object>()
    for (let i = 0; i < 200; i++) {
      const result = evaluateFlags({ ...input(flags, `user-${i}`), prepared })
      for (const answer of Object.values(result.flags)) {
        if (answer.failed) continue
        expect(Object.isFrozen(answer) && Object.isFrozen(answer.reason) && Object.isFrozen(answer.metadata)).to.equal(
          true,
        )
        const outcome = JSON.stringify(answer)
        const shared = seen.get(outcome)
        if (shared) expect(answer).to.equal(shared)
        else seen.set(outcome, answer)
      }
    }
    // 'multi' alone answers a variant a, b or none: at least two outcomes, each one object
    expect([...seen.keys()].filter((outcome) => outcome.includes('"key":"multi"')).length).to.be.greaterThan(1)
  })

  it("remembers the flags each set of request filters selects, and never answers one set with another's", () => {
    const all = { groups: [{ properties: [], rollout_percentage: 100 }] }
    const flags = [
      flag('client-only', all, { evaluation_runtime: 'client' }),
      flag('server-only', all, { evaluation_runtime: 'server' }),
      flag('tagged', all, { evaluation_contexts: ['checkout'] }),
      flag('survey-targeting-1', all),
      simpleFlag('depends-on-client', {
        properties: [{ key: 'client-only', type: 'flag', operator: 'flag_evaluates_to', value: false }],
      }),
    ]
    const prepared = prepareFlags(flags)
    const filterSets: Partial<EvaluationInput>[] = [
      { runtime: 'client' },
      { runtime: 'server' },
      { runtime: null },
      { runtime: 'all' },
      {},
      { evaluationContexts: ['checkout'] },
      { evaluationContexts: ['other'] },
      { evaluationContexts: [] },
      { onlySurveyFlags: true },
      { runtime: 'server', evaluationContexts: ['checkout'], onlySurveyFlags: false },
    ]
    for (let round = 0; round < 2; round++) {
      for (const filters of filterSets) {
        const request = input(flags, 'user-1', filters)
        expect(evaluateFlags({ ...request, prepared }), JSON.stringify(filters)).to.deep.equal(evaluateFlags(request))
        expect(planEvaluation({ ...request, prepared }), JSON.stringify(filters)).to.deep.equal(planEvaluation(request))
      }
    }
  })
})
