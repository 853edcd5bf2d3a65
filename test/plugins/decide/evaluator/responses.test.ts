import { expect } from 'chai'
import { evaluate, evaluateOne, flag } from './helpers.ts'

const variants = { variants: [{ key: 'control', rollout_percentage: 100 }] }

describe('evaluator payloads, reasons and metadata (flags.md §10)', () => {
  it('returns payloads["true"] for a boolean match, as stored', () => {
    const definition = flag('bool', { groups: [{ rollout_percentage: 100 }], payloads: { true: '{"color":"blue"}' } })
    const result = evaluateOne(definition)
    expect(result.metadata.payload).to.equal('{"color":"blue"}')
    expect(result.hasPayload).to.equal(true)
  })

  it("returns the variant's payload for a multivariate match", () => {
    const definition = flag('mv', {
      groups: [{ rollout_percentage: 100 }],
      multivariate: variants,
      payloads: { control: 42, true: 'unused' },
    })
    expect(evaluateOne(definition).metadata.payload).to.equal(42)
  })

  it('keeps a stored null as a present payload, and reports absence separately', () => {
    const stored = evaluateOne(
      flag('null-payload', { groups: [{ rollout_percentage: 100 }], payloads: { true: null } }),
    )
    expect(stored.metadata.payload).to.equal(null)
    expect(stored.hasPayload).to.equal(true)
    const absent = evaluateOne(flag('no-payload', { groups: [{ rollout_percentage: 100 }], payloads: { other: 1 } }))
    expect(absent.metadata.payload).to.equal(null)
    expect(absent.hasPayload).to.equal(false)
  })

  it('computes no payload for a non-match', () => {
    const result = evaluateOne(
      flag('miss', { groups: [{ rollout_percentage: 0 }], payloads: { true: 'x', false: 'y' } }),
    )
    expect(result.metadata.payload).to.equal(null)
    expect(result.hasPayload).to.equal(false)
  })

  it('reports id, version (0 when null) and a null description', () => {
    const result = evaluateOne(flag('meta', { groups: [] }, { id: 12, version: null }))
    expect(result.metadata).to.deep.equal({ id: 12, version: 0, description: null, payload: null })
    expect(evaluateOne(flag('meta3', { groups: [] }, { id: 13, version: 3 })).metadata.version).to.equal(3)
  })

  it('shapes a match like /flags?v=2', () => {
    const result = evaluateOne(
      flag(
        'shape',
        { groups: [{ rollout_percentage: 0 }, { rollout_percentage: 100 }], multivariate: variants },
        { id: 5 },
      ),
    )
    expect(result).to.deep.equal({
      key: 'shape',
      enabled: true,
      variant: 'control',
      failed: false,
      reason: { code: 'condition_match', condition_index: 1, description: 'Matched condition set 2' },
      metadata: { id: 5, version: 1, description: null, payload: null },
      hasPayload: false,
    })
  })

  it('contains every evaluated flag, matching or not', () => {
    const result = evaluate([
      flag('yes', { groups: [{ rollout_percentage: 100 }] }),
      flag('no', { groups: [{ rollout_percentage: 0 }] }),
    ])
    expect(Object.keys(result.flags).sort()).to.deep.equal(['no', 'yes'])
  })
})
