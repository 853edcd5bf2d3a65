import { expect } from 'chai'
import { evaluateFlags, prepareFlags } from '../../../../plugins/decide/evaluator/index.ts'
import type { EvaluationResult, FlagDefinition } from '../../../../plugins/decide/evaluator/index.ts'
import { flagsResponse } from '../../../../plugins/decide/http/responses.ts'
import type { ResponseShape } from '../../../../plugins/decide/http/responses.ts'
import { flagsResponseBuffer, flagsResponseJson } from '../../../../plugins/decide/http/response-json.ts'

const flag = (id: number, key: string, filters: FlagDefinition['filters']): FlagDefinition => ({
  id,
  key,
  active: true,
  version: 2,
  filters,
})

/** Keys JSON orders specially (integer-like first) or escapes, payload objects, variants named "null", failed flags. */
function definitions(payload: unknown): FlagDefinition[] {
  return [
    flag(1, 'on', { groups: [{ properties: [], rollout_percentage: 50 }], payloads: { true: payload } }),
    flag(2, '42', { groups: [{ properties: [], rollout_percentage: 100 }] }),
    flag(3, '7', {
      groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }],
    }),
    flag(4, '__proto__', { groups: [{ properties: [], rollout_percentage: 30 }] }),
    flag(5, 'quote"\u2028é', {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: {
        variants: [
          { key: 'null', rollout_percentage: 50 },
          { key: 'b', rollout_percentage: 50 },
        ],
      },
      payloads: { null: '"x"', b: null },
    }),
    flag(6, 'needs-db', {
      groups: [{ properties: [{ key: 'email', value: 'x', type: 'person' }], rollout_percentage: 100 }],
    }),
  ]
}

function result(
  flags: FlagDefinition[],
  distinctId: string,
  plan: string,
  prepared = prepareFlags(flags),
): EvaluationResult {
  return evaluateFlags({
    flags,
    prepared,
    distinctId,
    personPropertyOverrides: { plan },
    database: { status: 'failed' },
    now: 0,
  })
}

const SHAPES: ResponseShape[] = ['v2', 'v3', 'legacy', 'decide-v1', 'decide-v2']

describe('decide flagsResponseJson', () => {
  it('writes exactly what JSON.stringify writes for the response object, request after request', () => {
    const flags = definitions({ color: 'blue', n: [1, 2] })
    // the requests share the answers of equal outcomes, as when served from cached definitions
    const prepared = prepareFlags(flags)
    const fields = { config: { enable_collect_everything: true }, supportedCompression: ['gzip', 'lz64'] }
    // fields named like the members that follow them, and an integer-like one JSON puts first
    const awkward = {
      sessionRecording: false,
      flags: 'early',
      requestId: 'early',
      '3': 'x',
      errorsWhileComputingFlags: 1,
    }
    for (let i = 0; i < 300; i++) {
      const answer = result(flags, `user-${i}`, i % 2 ? 'pro' : 'free', prepared)
      const parts = { requestId: `request-${i}`, evaluatedAt: 1700000000000 + i }
      for (const shape of SHAPES) {
        for (const extra of [{}, fields, awkward]) {
          const expected = JSON.stringify({ ...extra, ...flagsResponse(shape, answer, parts) })
          expect(flagsResponseJson(extra, shape, answer, parts)).to.equal(expected)
          expect(
            flagsResponseBuffer(extra, shape, answer, parts).equals(Buffer.from(expected)),
            `${shape} bytes`,
          ).to.equal(true)
        }
      }
    }
  })

  it('writes the bytes of an answer without flags, and of one with errors', () => {
    const parts = { requestId: 'r', evaluatedAt: 0 }
    for (const answer of [
      { flags: {}, answers: [], errorsWhileComputingFlags: false },
      result(definitions(null), 'user-1', 'pro'),
    ]) {
      expect(answer.flags).to.satisfy(
        (flags: object) => Object.keys(flags).length === 0 || answer.errorsWhileComputingFlags,
      )
      expect(flagsResponseBuffer({}, 'v2', answer, parts).toString()).to.equal(
        JSON.stringify(flagsResponse('v2', answer, parts)),
      )
    }
  })

  it('writes the new payload once the definitions change, though the outcome is the same', () => {
    const parts = { requestId: 'r', evaluatedAt: 0 }
    for (const payload of ['{"v":1}', '{"v":2}', { v: 3 }, { v: 4 }]) {
      const flags = [
        flag(9, 'always', { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: payload } }),
      ]
      const body = JSON.parse(flagsResponseJson({}, 'v2', result(flags, 'user-3', 'pro'), parts)) as {
        flags: { always: { metadata: { payload: unknown } } }
      }
      expect(body.flags.always.metadata.payload).to.deep.equal(payload)
    }
  })
})
