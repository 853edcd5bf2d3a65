import { expect } from 'chai'
import { hashFor } from '../../../../plugins/decide/evaluator/hash.ts'
import { evaluateOne, flag, simpleFlag, valueOf } from './helpers.ts'

const variants = [
  { key: 'v1', rollout_percentage: 25 },
  { key: 'v2', rollout_percentage: 25 },
  { key: 'v3', rollout_percentage: 25 },
  { key: 'v4', rollout_percentage: 25 },
]

/** A 50% multivariate flag: its value reveals which identifier was hashed. */
function experiment(key: string, extra = {}) {
  return flag(key, { groups: [{ properties: [], rollout_percentage: 50 }], multivariate: { variants } }, extra)
}

/** The value the flag takes when `identifier` is hashed. */
function expectedFor(key: string, identifier: string): boolean | string {
  if (hashFor(key, identifier) > 0.5) return false
  const h = hashFor(key, identifier, 'variant')
  return variants[Math.min(3, Math.floor(h / 0.25))].key
}

/** Ids whose expected values differ from user-1's, so the test can tell which was hashed. */
function distinguishing(key: string, count: number): string[] {
  const ids: string[] = []
  for (let i = 0; ids.length < count; i++) {
    if (i > 10_000) throw new Error('no distinguishing ids')
    const id = `other-${i}`
    if (
      expectedFor(key, id) !== expectedFor(key, 'user-1') &&
      !ids.some((x) => expectedFor(key, x) === expectedFor(key, id))
    )
      ids.push(id)
  }
  return ids
}

describe('evaluator identifiers (flags.md §4)', () => {
  describe('person flags', () => {
    it('hashes the distinct id as given, case-sensitively', () => {
      const definition = experiment('case')
      expect(valueOf(evaluateOne(definition, { distinctId: 'Abc' }))).to.equal(expectedFor('case', 'Abc'))
      expect(valueOf(evaluateOne(definition, { distinctId: 'abc' }))).to.equal(expectedFor('case', 'abc'))
    })

    it('hashes a numeric distinct id as its JSON text', () => {
      const definition = experiment('numeric-id')
      expect(valueOf(evaluateOne(definition, { distinctId: 8675309 }))).to.equal(expectedFor('numeric-id', '8675309'))
    })

    it('hashes only the first 200 characters of a long distinct id', () => {
      const definition = experiment('long-id')
      const long = 'x'.repeat(200)
      expect(valueOf(evaluateOne(definition, { distinctId: `${long}tail` }))).to.equal(expectedFor('long-id', long))
    })
  })

  describe('experience continuity', () => {
    const key = 'continuity'
    const [anon, stored] = distinguishing(key, 2)
    const definition = experiment(key, { ensure_experience_continuity: true })

    it('hashes $anon_distinct_id when there is no stored override', () => {
      expect(valueOf(evaluateOne(definition, { anonDistinctId: anon }))).to.equal(expectedFor(key, anon))
    })

    it('prefers a stored hash-key override over $anon_distinct_id', () => {
      const result = evaluateOne(definition, { anonDistinctId: anon, hashKeyOverrides: { [key]: stored } })
      expect(valueOf(result)).to.equal(expectedFor(key, stored))
    })

    it('falls back to the distinct id', () => {
      expect(valueOf(evaluateOne(definition))).to.equal(expectedFor(key, 'user-1'))
    })

    it('ignores $anon_distinct_id for flags without continuity', () => {
      expect(valueOf(evaluateOne(experiment(key), { anonDistinctId: anon }))).to.equal(expectedFor(key, 'user-1'))
    })

    it('ignores overrides for group-aggregated flags', () => {
      const groupFlag = flag(
        key,
        {
          groups: [{ properties: [], rollout_percentage: 50 }],
          multivariate: { variants },
          aggregation_group_type_index: 0,
        },
        { ensure_experience_continuity: true },
      )
      const result = evaluateOne(groupFlag, {
        groupTypeMapping: { '0': 'company' },
        groups: { company: 'user-1' },
        anonDistinctId: anon,
        hashKeyOverrides: { [key]: stored },
      })
      expect(valueOf(result)).to.equal(expectedFor(key, 'user-1'))
    })
  })

  describe('device-id bucketing', () => {
    const key = 'by-device'
    const [device] = distinguishing(key, 1)
    const definition = experiment(key, { bucketing_identifier: 'device_id' })

    it('hashes the device id for person conditions', () => {
      expect(valueOf(evaluateOne(definition, { deviceId: device }))).to.equal(expectedFor(key, device))
    })

    it('falls back to a non-empty $device_id among the person property overrides', () => {
      expect(valueOf(evaluateOne(definition, { personPropertyOverrides: { $device_id: device } }))).to.equal(
        expectedFor(key, device),
      )
      expect(
        valueOf(evaluateOne(definition, { deviceId: '', personPropertyOverrides: { $device_id: device } })),
      ).to.equal(expectedFor(key, device))
      expect(
        valueOf(evaluateOne(definition, { deviceId: 'user-1', personPropertyOverrides: { $device_id: device } })),
      ).to.equal(expectedFor(key, 'user-1'))
      expect(evaluateOne(definition, { personPropertyOverrides: { $device_id: 12345 } }).reason.code).to.equal(
        'out_of_rollout_bound',
      )
    })

    it('skips person conditions without a device id, recording out_of_rollout_bound even at 100%', () => {
      const full = simpleFlag(
        'device-full',
        { properties: [], rollout_percentage: 100 },
        { bucketing_identifier: 'device_id' },
      )
      for (const deviceId of [undefined, null, '']) {
        const result = evaluateOne(full, { deviceId })
        expect(result.enabled).to.equal(false)
        expect(result.reason).to.deep.equal({
          code: 'out_of_rollout_bound',
          condition_index: 0,
          description: 'Out of rollout bound',
        })
      }
    })

    it('leaves group conditions alone', () => {
      const mixed = flag(
        'device-mixed',
        { groups: [{ properties: [], rollout_percentage: 100, aggregation_group_type_index: 0 }] },
        { bucketing_identifier: 'device_id' },
      )
      expect(
        evaluateOne(mixed, { groupTypeMapping: { '0': 'company' }, groups: { company: 'acme' } }).enabled,
      ).to.equal(true)
    })
  })

  describe('empty identifier', () => {
    it('lands an empty distinct id inside every rollout, 0% included, with the first variant', () => {
      expect(
        evaluateOne(simpleFlag('empty-zero', { properties: [], rollout_percentage: 0 }), { distinctId: '' }).enabled,
      ).to.equal(true)
      expect(valueOf(evaluateOne(experiment('empty-variant'), { distinctId: '' }))).to.equal('v1')
    })
  })
})
