import { expect } from 'chai'
import { evaluateFlags } from '../../../../plugins/decide/evaluator/index.ts'
import type { EvaluationResult, FlagDefinition } from '../../../../plugins/decide/evaluator/index.ts'
import { decideFields, flagsResponse, shapeFor } from '../../../../plugins/decide/http/responses.ts'

const flag = (id: number, key: string, filters: FlagDefinition['filters']): FlagDefinition => ({
  id,
  key,
  active: true,
  version: 2,
  filters,
})

/** Real evaluator output: a boolean flag with a payload, a variant, an off flag, a failed one. */
function sample(): EvaluationResult {
  return evaluateFlags({
    flags: [
      flag(1, 'on', { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"a":1}' } }),
      flag(2, 'variant', {
        groups: [{ properties: [], rollout_percentage: 100, variant: 'blue' }],
        multivariate: { variants: [{ key: 'blue', rollout_percentage: 100 }] },
        payloads: { blue: null },
      }),
      flag(3, 'off', { groups: [{ properties: [], rollout_percentage: 0 }], payloads: { true: 'never' } }),
      flag(4, 'needs-db', {
        groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }],
      }),
    ],
    distinctId: 'user',
    database: { status: 'failed' },
    now: 0,
  })
}

describe('decide responses', () => {
  describe('shapeFor', () => {
    it('picks the shape from the path and v as flags.md §10.3 tabulates', () => {
      const table: Array<[string, string | undefined, string]> = [
        ['/decide/', undefined, 'decide-v1'],
        ['/decide', '1', 'decide-v1'],
        ['/decide/', '2', 'decide-v2'],
        ['/decide/', '3', 'legacy'],
        ['/decide/', '4', 'v2'],
        ['/decide/', '5', 'v2'],
        ['/flags', undefined, 'legacy'],
        ['/flags/', '1', 'legacy'],
        ['/flags/', '2', 'v2'],
        ['/flags', '3', 'v3'],
        ['/flags/', 'junk', 'legacy'],
      ]
      for (const [path, v, shape] of table) expect(shapeFor(path, v), `${path}?v=${v}`).to.equal(shape)
    })
  })

  describe('flagsResponse', () => {
    const parts = { requestId: 'r', evaluatedAt: 1 }

    it('v2: a record per flag, failed only when true, payload and metadata', () => {
      const body = flagsResponse('v2', sample(), parts) as {
        flags: Record<string, Record<string, unknown>>
        errorsWhileComputingFlags: boolean
      }
      expect(body.errorsWhileComputingFlags).to.equal(true)
      expect(body.flags.on).to.deep.equal({
        key: 'on',
        enabled: true,
        variant: null,
        reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
        metadata: { id: 1, version: 2, description: null, payload: '{"a":1}', has_experiment: false },
      })
      expect(body.flags.off).to.not.have.property('failed')
      expect(body.flags['needs-db']).to.include({ failed: true, enabled: false })
      expect(body).to.include({ requestId: 'r', evaluatedAt: 1 })
    })

    it('v3: value instead of enabled/variant, null for a failed flag', () => {
      const body = flagsResponse('v3', sample(), parts) as { flags: Record<string, Record<string, unknown>> }
      expect(body.flags.variant.value).to.equal('blue')
      expect(body.flags.off.value).to.equal(false)
      expect(body.flags['needs-db'].value).to.equal(null)
    })

    it('legacy: every flag as a value, failed as false; payloads only of matches, a stored null included', () => {
      const body = flagsResponse('legacy', sample(), parts)
      expect(body.featureFlags).to.deep.equal({ on: true, variant: 'blue', off: false, 'needs-db': false })
      expect(body.featureFlagPayloads).to.deep.equal({ on: '{"a":1}', variant: null })
      expect(body).to.include({ errorsWhileComputingFlags: true, requestId: 'r' })
    })

    it('decide v2 and v1: enabled flags only, as values then as keys', () => {
      expect(flagsResponse('decide-v2', sample(), parts)).to.deep.equal({ featureFlags: { on: true, variant: 'blue' } })
      expect(flagsResponse('decide-v1', sample(), parts)).to.deep.equal({ featureFlags: ['on', 'variant'] })
    })

    it('serialises flags named like Object.prototype members', () => {
      const answer = { ...sample().flags.on!, key: '__proto__' }
      const flags = Object.defineProperty({}, '__proto__', { value: answer, enumerable: true })
      const result: EvaluationResult = { errorsWhileComputingFlags: false, flags, answers: [answer] }
      const text = JSON.stringify(flagsResponse('legacy', result, parts))
      expect(JSON.parse(text).featureFlags).to.have.own.property('__proto__', true)
    })
  })

  it('decideFields carries the v3 contract of design.md §1', () => {
    expect(decideFields()).to.deep.equal({
      config: { enable_collect_everything: true },
      toolbarParams: {},
      isAuthenticated: false,
      supportedCompression: ['gzip', 'lz64'],
    })
  })
})
