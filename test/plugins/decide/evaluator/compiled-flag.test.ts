/**
 * The compiled flags (compiled-flag.ts) against the reference interpreter (flag.ts): PostHog's
 * consistency tables through whole evaluations, then generated definitions and users covering
 * every operator family, aggregation, dependencies, cohorts, variants and overrides. Every other
 * evaluator test compares the two as well (helpers.ts).
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { evaluateFlags } from '../../../../plugins/decide/evaluator/evaluate.ts'
import { prepareFlags } from '../../../../plugins/decide/evaluator/prepared.ts'
import type { EvaluationInput, FlagDefinition } from '../../../../plugins/decide/evaluator/types.ts'
import { MULTIVARIATE_FLAG_55_PERCENT, MULTIVARIATE_VARIANTS, SIMPLE_FLAG_45_PERCENT } from './fixtures/consistency.ts'
import { flag, NOW } from './helpers.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_126)

describe('compiled flags against the interpreter', () => {
  it('answer PostHog’s consistency tables as the interpreter does, for all 1,000 ids', () => {
    const flags = [
      flag('simple-flag', { groups: [{ properties: [], rollout_percentage: 45 }] }),
      flag('multivariate-flag', {
        groups: [{ properties: [], rollout_percentage: 55 }],
        multivariate: { variants: MULTIVARIATE_VARIANTS },
      }),
    ]
    const prepared = prepareFlags(flags)
    for (let i = 0; i < 1000; i++) {
      const input = {
        flags,
        prepared,
        distinctId: `distinct_id_${i}`,
        database: { status: 'skipped' as const },
        now: NOW,
      }
      const compiled = evaluateFlags(input)
      expect(compiled).to.deep.equal(evaluateFlags({ ...input, interpret: true }))
      expect(compiled.flags['simple-flag']!.enabled).to.equal(SIMPLE_FLAG_45_PERCENT[i] === '1')
      const variant = Number(MULTIVARIATE_FLAG_55_PERCENT[i])
      expect(compiled.flags['multivariate-flag']!.variant).to.equal(
        variant ? MULTIVARIATE_VARIANTS[variant - 1]!.key : null,
      )
    }
  })

  const text = fc.constantFrom(
    'pro',
    'PRO',
    'Free',
    'true',
    'FALSE',
    '10',
    '1.5',
    'a@corp.example',
    '',
    '2.1.0',
    '2024-03-01',
    '2024-03-01 09:30',
    '2024-06-15T12:00:00Z',
    '-30d',
    '1.2.*',
    'v1.2',
    '1709251200',
  )
  const value = fc.oneof(
    text,
    fc.integer({ min: -5, max: 120 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(text, { maxLength: 3 }),
  )
  const operator = fc.constantFrom(
    'exact',
    'is_not',
    'icontains',
    'not_icontains',
    'starts_with',
    'not_starts_with',
    'ends_with',
    'not_ends_with',
    'icontains_multi',
    'regex',
    'not_regex',
    'gt',
    'lt',
    'gte',
    'lte',
    'is_set',
    'is_not_set',
    'is_date_before',
    'is_date_after',
    'is_date_exact',
    'semver_eq',
    'semver_neq',
    'semver_gt',
    'semver_gte',
    'semver_lt',
    'semver_lte',
    'semver_tilde',
    'semver_caret',
    'semver_wildcard',
    'unknown_op',
  )
  const key = fc.constantFrom('plan', 'age', 'email', 'Plan', 'version')
  const propertyFilter = fc
    .record(
      { key, operator, value, type: fc.constantFrom('person', 'person', 'group', 'event') },
      { requiredKeys: ['key', 'type'] },
    )
    .map((f) => (f.type === 'group' ? { ...f, group_type_index: 0 } : f))
  const flagFilter = fc.record({
    key: fc.constantFrom('1', '2', 'f1', 'gone'),
    type: fc.constant('flag'),
    operator: fc.constant('flag_evaluates_to'),
    value: fc.oneof(fc.boolean(), fc.constantFrom('a', 'b')),
  })
  const cohortFilter = fc.constant({ key: 'id', type: 'cohort', value: 7 })
  const condition = fc.record(
    {
      properties: fc.array(fc.oneof({ weight: 4, arbitrary: propertyFilter }, flagFilter, cohortFilter), {
        maxLength: 3,
      }),
      rollout_percentage: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant(null)),
      variant: fc.constantFrom('a', 'b', 'zzz'),
      aggregation_group_type_index: fc.constantFrom(0, null),
    },
    { requiredKeys: ['properties'] },
  )
  const flagShape = fc.record(
    {
      groups: fc.array(condition, { maxLength: 3 }),
      multivariate: fc.constant({
        variants: [
          { key: 'a', rollout_percentage: 60 },
          { key: 'b', rollout_percentage: 30 },
        ],
      }),
      payloads: fc.constant({ true: '{"t":1}', a: '"A"' }),
      aggregation_group_type_index: fc.constantFrom(0, null),
      bucketing_identifier: fc.constantFrom('device_id', 'distinct_id'),
      version: fc.constantFrom(1, 2),
    },
    { requiredKeys: ['groups'] },
  )
  const flagSet = fc.array(flagShape, { minLength: 1, maxLength: 6 }).map((shapes) =>
    shapes.map(
      (filters, i): FlagDefinition => ({
        id: i + 1,
        key: `f${i + 1}`,
        active: true,
        deleted: false,
        version: 1,
        ensure_experience_continuity: i === 0,
        filters: filters as FlagDefinition['filters'],
      }),
    ),
  )
  const person = fc.dictionary(key, value, { maxKeys: 4 })

  it('give generated definitions and users the interpreter’s answers, reasons and payloads', () => {
    let compared = 0
    fc.assert(
      fc.property(
        flagSet,
        person,
        person,
        fc.option(fc.constantFrom('dev-1', '')),
        fc.boolean(),
        (flags, personProperties, groupProperties, deviceId, withGroup) => {
          const input: EvaluationInput = {
            flags,
            distinctId: 'user-1',
            deviceId,
            anonDistinctId: 'anon-1',
            hashKeyOverrides: { f2: 'stored-key' },
            personPropertyOverrides: personProperties,
            groups: withGroup ? { company: 'acme' } : null,
            groupTypeMapping: { 0: 'company' },
            groupPropertyOverrides: withGroup ? { company: groupProperties } : null,
            cohorts: {
              7: {
                type: 'OR',
                values: [{ type: 'AND', values: [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }] }],
              },
            },
            database: { status: 'skipped' },
            now: NOW,
          }
          // requests in other zones and at other times, on the same compiled flags (which keep what they read last)
          const prepared = prepareFlags(flags)
          for (const timezone of [undefined, 'Asia/Tokyo', undefined])
            for (const now of [NOW, NOW + 86_400_000]) {
              const request = { ...input, prepared, timezone, now }
              const compiled = evaluateFlags(request)
              expect(compiled).to.deep.equal(evaluateFlags({ ...request, interpret: true }))
              compared += compiled.answers.length
            }
        },
      ),
      { numRuns: 1500, seed: SEED },
    )
    expect(compared).to.be.above(1500)
  })

  it('lists what each flag compiled to (the decide option printCompiledFlags)', () => {
    const flags = [
      flag('pro-users', {
        groups: [
          {
            properties: [
              { key: 'plan', type: 'person', operator: 'exact', value: ['pro'] },
              { key: 'id', type: 'cohort', value: 3 },
            ],
            rollout_percentage: 30,
          },
        ],
      }),
      flag('everyone', { groups: [{ properties: [], rollout_percentage: 100 }] }),
    ]
    const listing = prepareFlags(flags).listing()
    expect(listing).to.include('pro-users (id ')
    expect(listing).to.include('person "plan" exact ["pro"]')
    expect(listing).to.include('cohorts 3 (last, as a batch)')
    expect(listing).to.include('rollout 30%')
    expect(listing).to.include('rollout 100% (no hash)')
  })
})
