import { expect } from 'chai'
import { detectEvaluationRuntime, isFlagExcluded } from '../../../../plugins/decide/evaluator/filtering.ts'
import { evaluate, flag } from './helpers.ts'

const live = (key: string, extra = {}) => flag(key, { groups: [{ rollout_percentage: 100 }] }, extra)

describe('evaluator request filters (flags.md §1 evaluation_runtime and evaluation_contexts)', () => {
  const flags = [
    live('any'),
    live('all', { evaluation_runtime: 'all' }),
    live('client', { evaluation_runtime: 'client' }),
    live('server', { evaluation_runtime: 'server' }),
    live('odd', { evaluation_runtime: 'edge' }),
  ]
  const keysFor = (runtime: 'all' | 'client' | 'server' | null) =>
    Object.keys(evaluate(flags, { runtime }).flags).sort()

  it('evaluates runtime-specific flags only for that runtime', () => {
    expect(keysFor('client')).to.deep.equal(['all', 'any', 'client', 'odd'])
    expect(keysFor('server')).to.deep.equal(['all', 'any', 'odd', 'server'])
    expect(keysFor('all')).to.deep.equal(['all', 'any', 'client', 'odd', 'server'])
  })

  it('evaluates only runtime-agnostic flags when the runtime cannot be told', () => {
    expect(keysFor(null)).to.deep.equal(['all', 'any', 'odd'])
  })

  it('keeps flags without evaluation contexts and those sharing one with the request', () => {
    const tagged = [
      live('untagged'),
      live('web', { evaluation_contexts: ['web'] }),
      live('app', { evaluation_tags: ['app'] }),
    ]
    expect(Object.keys(evaluate(tagged, { evaluationContexts: ['web'] }).flags).sort()).to.deep.equal([
      'untagged',
      'web',
    ])
    expect(Object.keys(evaluate(tagged, { evaluationContexts: [] }).flags)).to.have.length(3)
  })

  it('limits survey-only requests to survey-targeting flags', () => {
    expect(isFlagExcluded(live('survey-targeting-abc'), { onlySurveyFlags: true })).to.equal(false)
    expect(isFlagExcluded(live('other'), { onlySurveyFlags: true })).to.equal(true)
  })

  it('guesses the runtime from the explicit field, the user agent, then browser headers', () => {
    expect(detectEvaluationRuntime({}, 'CLIENT')).to.equal('client')
    expect(detectEvaluationRuntime({ 'user-agent': 'posthog-node/5.0.0' })).to.equal('server')
    expect(detectEvaluationRuntime({ 'user-agent': 'Mozilla/5.0 (X11)' })).to.equal('client')
    expect(detectEvaluationRuntime({ 'user-agent': 'posthog-ios/3.0' })).to.equal('client')
    expect(detectEvaluationRuntime({ origin: 'https://example.com' })).to.equal('client')
    expect(detectEvaluationRuntime({ 'user-agent': 'custom/1.0' })).to.equal(null)
  })
})
