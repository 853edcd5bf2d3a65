import { expect } from 'chai'
import { evaluate, flag } from './helpers.ts'

const byProperty = (key: string, property: string) =>
  flag(key, {
    groups: [{ properties: [{ key: property, value: 'x', type: 'person' }], rollout_percentage: 100 }],
    payloads: { true: 'p' },
  })

describe('evaluator errors and absent flags (flags.md §11, §12)', () => {
  describe('a database failure', () => {
    const flags = [
      flag('rollout-only', { groups: [{ properties: [], rollout_percentage: 100 }] }),
      byProperty('answered-by-overrides', 'plan'),
      byProperty('needs-database', 'email'),
      flag('needs-cohort', {
        groups: [{ properties: [{ key: 'id', value: 1, type: 'cohort' }], rollout_percentage: 100 }],
      }),
      flag('group-flag', { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 100 }] }),
    ]
    const result = evaluate(flags, { database: { status: 'failed' }, personPropertyOverrides: { plan: 'x' } })

    it('fails only the flags that need the database', () => {
      for (const key of ['needs-database', 'needs-cohort', 'group-flag']) {
        expect(result.flags[key], key).to.deep.include({ enabled: false, variant: null, failed: true })
        expect(result.flags[key].reason).to.deep.equal({
          code: 'database_error',
          condition_index: null,
          description: 'Database connection error during evaluation',
        })
        expect(result.flags[key].metadata.payload).to.equal(null)
      }
      expect(result.errorsWhileComputingFlags).to.equal(true)
    })

    it('still answers rollout-only flags and flags whose properties are all in the overrides', () => {
      expect(result.flags['rollout-only'].enabled).to.equal(true)
      expect(result.flags['answered-by-overrides']).to.deep.include({ enabled: true, failed: false })
      expect(result.flags['answered-by-overrides'].metadata.payload).to.equal('p')
    })

    it("passes through the caller's error code", () => {
      const timedOut = evaluate([byProperty('slow', 'email')], {
        database: { status: 'failed', code: 'timeout', description: 'Database statement timed out' },
      })
      expect(timedOut.flags.slow.reason).to.deep.equal({
        code: 'timeout',
        condition_index: null,
        description: 'Database statement timed out',
      })
    })

    it('is no error when no evaluated flag needed the database', () => {
      const quiet = evaluate([flag('only-rollout', { groups: [{ rollout_percentage: 100 }] })], {
        database: { status: 'failed' },
      })
      expect(quiet.errorsWhileComputingFlags).to.equal(false)
    })
  })

  describe('a hash-key override failure', () => {
    it('fails continuity flags and evaluates the others', () => {
      const flags = [
        flag('continuity', { groups: [{ rollout_percentage: 50 }] }, { ensure_experience_continuity: true }),
        flag('ordinary', { groups: [{ rollout_percentage: 100 }] }),
      ]
      const result = evaluate(flags, { hashKeyOverrideFailed: true })
      expect(result.flags.continuity.failed).to.equal(true)
      expect(result.flags.continuity.reason).to.deep.equal({
        code: 'hash_key_override_error',
        condition_index: null,
        description: 'Failed to fetch hash key override for experience continuity',
      })
      expect(result.flags.ordinary.enabled).to.equal(true)
      expect(result.errorsWhileComputingFlags).to.equal(true)
    })
  })

  describe('malformed definitions', () => {
    it('fail only their own flag', () => {
      const broken = flag('broken', { groups: [{ properties: 'nope' as never, rollout_percentage: 100 }] })
      const result = evaluate([broken, flag('fine', { groups: [{ rollout_percentage: 100 }] })])
      expect(result.flags.broken.failed).to.equal(true)
      expect(result.flags.broken.reason).to.deep.equal({
        code: 'flag_data_parsing_error',
        condition_index: null,
        description: 'Failed to parse flag data: filters.groups[0].properties is not a list',
      })
      expect(result.errorsWhileComputingFlags).to.equal(true)
      expect(result.flags.fine.enabled).to.equal(true)
    })

    it('fail v2 rule configurations, which this evaluator does not implement', () => {
      const v2 = flag('rules', { version: 2, groups: [] })
      expect(evaluate([v2]).flags.rules.reason.code).to.equal('unsupported_flag_config')
    })
  })

  describe('inactive and deleted flags (§12)', () => {
    it('are absent from the response', () => {
      const result = evaluate([
        flag('inactive', { groups: [{ rollout_percentage: 100 }] }, { active: false }),
        flag('deleted', { groups: [{ rollout_percentage: 100 }] }, { deleted: true }),
        flag('live', { groups: [{ rollout_percentage: 100 }] }),
      ])
      expect(Object.keys(result.flags)).to.deep.equal(['live'])
    })
  })

  describe('flag keys that are Object.prototype names', () => {
    it('evaluates and returns them like any other key', () => {
      const keys = ['constructor', 'toString', 'valueOf', 'hasOwnProperty']
      const result = evaluate(
        keys.map((key) => flag(key, { groups: [{ rollout_percentage: 100 }] })),
        { hashKeyOverrides: {} },
      )
      expect(Object.keys(result.flags)).to.have.members(keys)
      for (const key of keys) expect(result.flags[key].enabled, key).to.equal(true)
    })

    it('never takes an inherited member for a stored hash key override', () => {
      const continuity = flag(
        'constructor',
        { groups: [{ rollout_percentage: 50 }] },
        { ensure_experience_continuity: true },
      )
      const key: string = 'constructor'
      const plain = evaluate([continuity], { hashKeyOverrides: {} }).flags[key]
      const none = evaluate([continuity]).flags[key]
      expect(plain.enabled).to.equal(none.enabled)
    })
  })
})
