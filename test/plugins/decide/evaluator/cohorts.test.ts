import { expect } from 'chai'
import type { CohortDefinition, PropertyFilter } from '../../../../plugins/decide/evaluator/types.ts'
import { evaluate, evaluateOne, flag } from './helpers.ts'

const prop = (key: string, value: unknown, operator = 'exact', negation = false): PropertyFilter => ({
  key,
  value,
  operator,
  type: 'person',
  negation,
})
const inCohort = (id: unknown, operator: string | null = 'in', negation = false): PropertyFilter => ({
  key: 'id',
  value: id,
  operator,
  type: 'cohort',
  negation,
})
const tree = (type: 'AND' | 'OR', ...groups: { type: string; values: PropertyFilter[] }[]) => ({
  properties: { type, values: groups },
})
const dynamic = (id: number, filters: unknown, extra: Partial<CohortDefinition> = {}): CohortDefinition => ({
  id,
  is_static: false,
  filters,
  ...extra,
})
const cohortFlag = (key: string, ...filters: PropertyFilter[]) =>
  flag(key, { groups: [{ properties: filters, rollout_percentage: 100 }] })

function run(
  definition: ReturnType<typeof flag>,
  cohorts: unknown,
  person: Record<string, unknown> | null,
  staticCohortIds: number[] = [],
) {
  return evaluateOne(definition, {
    cohorts: cohorts as CohortDefinition[],
    database: { status: 'loaded', person: person === null ? null : { properties: person }, staticCohortIds },
  })
}

describe('evaluator cohorts (flags.md §9)', () => {
  const proUsers = dynamic(
    1,
    tree('AND', { type: 'AND', values: [prop('plan', 'pro'), prop('email', '@acme.com', 'icontains')] }),
  )

  it('evaluates a dynamic cohort from the merged person properties', () => {
    const definition = cohortFlag('pro', inCohort(1))
    expect(run(definition, [proUsers], { plan: 'pro', email: 'a@acme.com' }).enabled).to.equal(true)
    expect(run(definition, [proUsers], { plan: 'free', email: 'a@acme.com' }).enabled).to.equal(false)
    const viaOverride = evaluateOne(definition, {
      cohorts: [proUsers],
      database: { status: 'loaded', person: { properties: { plan: 'free' } } },
      personPropertyOverrides: { plan: 'pro', email: 'b@acme.com' },
    })
    expect(viaOverride.enabled).to.equal(true)
  })

  it('honours not_in, defaults to in, and accepts numeric-string ids', () => {
    expect(run(cohortFlag('not-pro', inCohort(1, 'not_in')), [proUsers], { plan: 'free' }).enabled).to.equal(true)
    expect(
      run(cohortFlag('default-in', inCohort(1, null)), [proUsers], { plan: 'pro', email: 'x@acme.com' }).enabled,
    ).to.equal(true)
    expect(
      run(cohortFlag('string-id', inCohort('1')), [proUsers], { plan: 'pro', email: 'x@acme.com' }).enabled,
    ).to.equal(true)
  })

  it('evaluates nested AND/OR groups', () => {
    const either = dynamic(
      2,
      tree(
        'OR',
        { type: 'AND', values: [prop('plan', 'pro')] },
        { type: 'OR', values: [prop('country', 'FR'), prop('country', 'DE')] },
      ),
    )
    const definition = cohortFlag('either', inCohort(2))
    expect(run(definition, [either], { country: 'DE' }).enabled).to.equal(true)
    expect(run(definition, [either], { plan: 'pro' }).enabled).to.equal(true)
    expect(run(definition, [either], { country: 'US' }).enabled).to.equal(false)
  })

  it('applies negation to property filters inside cohorts', () => {
    const notFree = dynamic(3, tree('AND', { type: 'AND', values: [prop('plan', 'free', 'exact', true)] }))
    const definition = cohortFlag('not-free', inCohort(3))
    expect(run(definition, [notFree], { plan: 'pro' }).enabled).to.equal(true)
    expect(run(definition, [notFree], { plan: 'free' }).enabled).to.equal(false)
    expect(run(definition, [notFree], {}).enabled).to.equal(true)
  })

  it('evaluates cohorts inside cohorts, dependencies first, with negation in AND groups', () => {
    const outer = dynamic(10, tree('AND', { type: 'AND', values: [inCohort(1), prop('country', 'FR')] }))
    const excluding = dynamic(11, tree('AND', { type: 'AND', values: [inCohort(1, 'in', true)] }))
    const person = { plan: 'pro', email: 'x@acme.com', country: 'FR' }
    expect(run(cohortFlag('outer', inCohort(10)), [outer, proUsers], person).enabled).to.equal(true)
    expect(run(cohortFlag('outer-no', inCohort(10)), [outer, proUsers], { ...person, plan: 'free' }).enabled).to.equal(
      false,
    )
    expect(run(cohortFlag('excluding', inCohort(11)), [excluding, proUsers], person).enabled).to.equal(false)
    expect(run(cohortFlag('excluding-yes', inCohort(11)), [excluding, proUsers], { plan: 'free' }).enabled).to.equal(
      true,
    )
  })

  it('applies negation to nested cohorts in OR groups too, as the flags service and the SDKs do', () => {
    const orNegated = dynamic(12, tree('AND', { type: 'OR', values: [inCohort(1, 'in', true)] }))
    expect(
      run(cohortFlag('or-negated', inCohort(12)), [orNegated, proUsers], { plan: 'pro', email: 'x@acme.com' }).enabled,
    ).to.equal(false)
    expect(run(cohortFlag('or-negated', inCohort(12)), [orNegated, proUsers], { plan: 'free' }).enabled).to.equal(true)
  })

  it('reads a single group whose values are filters and cohort references, with no inner group', () => {
    const flat = dynamic(13, { properties: { type: 'OR', values: [prop('country', 'FR'), inCohort(1)] } })
    const definition = cohortFlag('flat', inCohort(13))
    expect(run(definition, [flat, proUsers], { country: 'FR' }).enabled).to.equal(true)
    expect(run(definition, [flat, proUsers], { plan: 'pro', email: 'x@acme.com' }).enabled).to.equal(true)
    expect(run(definition, [flat, proUsers], { country: 'US', plan: 'free' }).enabled).to.equal(false)
  })

  it('reads groups nested at any depth, mixing filters and groups in one list', () => {
    const deep = dynamic(14, {
      properties: {
        type: 'AND',
        values: [
          prop('beta', 'yes'),
          {
            type: 'OR',
            values: [
              prop('country', 'FR'),
              {
                type: 'AND',
                values: [prop('country', 'DE'), { type: 'OR', values: [inCohort(1, 'not_in'), prop('vip', 'yes')] }],
              },
            ],
          },
        ],
      },
    })
    const definition = cohortFlag('deep', inCohort(14))
    expect(run(definition, [deep, proUsers], { beta: 'yes', country: 'FR' }).enabled).to.equal(true)
    expect(run(definition, [deep, proUsers], { beta: 'yes', country: 'DE', plan: 'free' }).enabled).to.equal(true)
    expect(
      run(definition, [deep, proUsers], { beta: 'yes', country: 'DE', plan: 'pro', email: 'x@acme.com' }).enabled,
    ).to.equal(false)
    expect(
      run(definition, [deep, proUsers], { beta: 'yes', country: 'DE', plan: 'pro', email: 'x@acme.com', vip: 'yes' })
        .enabled,
    ).to.equal(true)
    expect(run(definition, [deep, proUsers], { beta: 'no', country: 'FR' }).enabled).to.equal(false)
  })

  it('fails a flag whose cohort nests deeper than PostHog reads (64 levels)', () => {
    const nest = (levels: number) => {
      let node: unknown = prop('country', 'FR')
      for (let i = 0; i < levels; i++) node = { type: 'AND', values: [node] }
      return dynamic(15, { properties: { type: 'AND', values: [node] } })
    }
    expect(run(cohortFlag('deep-ok', inCohort(15)), [nest(64)], { country: 'FR' }).enabled).to.equal(true)
    expect(run(cohortFlag('too-deep', inCohort(15)), [nest(65)], { country: 'FR' }).reason.code).to.equal(
      'cohort_filters_parsing_error',
    )
  })

  it('takes static cohort membership from storage, and nobody is a member without a person', () => {
    const statics: CohortDefinition = { id: 20, is_static: true, filters: { properties: {} } }
    const definition = cohortFlag('static', inCohort(20))
    expect(run(definition, [statics], {}, [20]).enabled).to.equal(true)
    expect(run(definition, [statics], {}, []).enabled).to.equal(false)
    expect(run(definition, [statics], null, [20]).enabled).to.equal(false)
    const nested = dynamic(21, tree('AND', { type: 'AND', values: [inCohort(20)] }))
    expect(run(cohortFlag('nested-static', inCohort(21)), [nested, statics], {}, [20]).enabled).to.equal(true)
  })

  it('requires every cohort filter of a set, ANDed with the other filters', () => {
    const france = dynamic(4, tree('AND', { type: 'AND', values: [prop('country', 'FR')] }))
    const definition = cohortFlag('both', inCohort(1), inCohort(4), prop('beta', true))
    const person = { plan: 'pro', email: 'x@acme.com', country: 'FR', beta: 'true' }
    expect(run(definition, [proUsers, france], person).enabled).to.equal(true)
    expect(run(definition, [proUsers, france], { ...person, country: 'IT' }).enabled).to.equal(false)
    expect(run(definition, [proUsers, france], { ...person, beta: false }).enabled).to.equal(false)
  })

  it('accepts the SDK cohort format keyed by id', () => {
    const definition = cohortFlag('sdk-format', inCohort(5))
    const cohorts = { '5': { type: 'OR', values: [{ type: 'AND', values: [prop('plan', 'pro')] }] } }
    expect(run(definition, cohorts, { plan: 'pro' }).enabled).to.equal(true)
  })

  it('treats behavioural leaves and membership-store cohorts as non-matching', () => {
    const behavioural = dynamic(
      6,
      tree('OR', {
        type: 'OR',
        values: [{ key: '$pageview', value: 'performed_event', type: 'behavioral' } as PropertyFilter],
      }),
    )
    const realtime = dynamic(7, tree('AND', { type: 'AND', values: [prop('plan', 'pro')] }), {
      cohort_type: 'realtime',
    })
    expect(run(cohortFlag('behavioural', inCohort(6)), [behavioural], { plan: 'pro' }).enabled).to.equal(false)
    expect(run(cohortFlag('realtime', inCohort(7)), [realtime], { plan: 'pro' }).enabled).to.equal(false)
  })

  describe('failures fail only the flag asking', () => {
    it('fails a flag targeting a deleted or unknown cohort', () => {
      const deleted = { ...proUsers, id: 8, deleted: true }
      const result = evaluate(
        [
          cohortFlag('deleted', inCohort(8)),
          cohortFlag('fine', inCohort(1)),
          flag('plain', { groups: [{ rollout_percentage: 100 }] }),
        ],
        {
          cohorts: [deleted, proUsers],
          database: { status: 'loaded', person: { properties: { plan: 'pro', email: 'x@acme.com' } } },
        },
      )
      expect(result.flags.deleted).to.deep.include({ enabled: false, variant: null, failed: true })
      expect(result.flags.deleted.reason).to.deep.equal({
        code: 'dependency_not_found_cohort',
        condition_index: null,
        description: 'Cohort dependency not found',
      })
      expect(result.flags.deleted.metadata.payload).to.equal(null)
      expect(result.flags.fine.enabled).to.equal(true)
      expect(result.flags.plain.enabled).to.equal(true)
      expect(result.errorsWhileComputingFlags).to.equal(true)
    })

    it('fails a flag whose cohort refers to a missing cohort or a cycle', () => {
      const dangling = dynamic(30, tree('AND', { type: 'AND', values: [inCohort(404)] }))
      const loopA = dynamic(31, tree('AND', { type: 'AND', values: [inCohort(32)] }))
      const loopB = dynamic(32, tree('AND', { type: 'AND', values: [inCohort(31)] }))
      expect(run(cohortFlag('dangling', inCohort(30)), [dangling], {}).reason.code).to.equal(
        'dependency_not_found_cohort',
      )
      const cycle = run(cohortFlag('cycle', inCohort(31)), [loopA, loopB], {})
      expect(cycle.reason).to.deep.equal({
        code: 'dependency_cycle_cohort',
        condition_index: null,
        description: 'Cohort dependency cycle detected',
      })
    })

    it('fails a flag whose cohort filters are malformed', () => {
      const malformed = dynamic(40, { properties: { type: 'XOR', values: [] } })
      expect(run(cohortFlag('malformed', inCohort(40)), [malformed], {}).reason.code).to.equal(
        'cohort_filters_parsing_error',
      )
      expect(run(cohortFlag('bad-id', inCohort('abc')), [], {}).reason.code).to.equal('cohort_filters_parsing_error')
    })

    it('reads a cohort definition once for all the requests that share it, failures included', () => {
      let reads = 0
      const counted = (properties: unknown) => ({
        get properties() {
          reads++
          return properties
        },
      })
      const pro = dynamic(50, counted(tree('AND', { type: 'AND', values: [prop('plan', 'pro')] }).properties))
      const outer = dynamic(51, counted(tree('AND', { type: 'AND', values: [inCohort(50)] }).properties))
      const broken = dynamic(52, counted({ type: 'XOR', values: [] }))
      const cohorts = [pro, outer, broken]
      const flags = [cohortFlag('outer', inCohort(51)), cohortFlag('broken', inCohort(52))]
      for (let i = 0; i < 6; i++) {
        const plan = i % 2 ? 'pro' : 'free'
        const result = evaluate(flags, {
          cohorts,
          database: { status: 'loaded', person: { properties: { plan } }, staticCohortIds: [] },
        })
        expect(result.flags.outer!.enabled, plan).to.equal(plan === 'pro')
        expect(result.flags.broken!.reason.code).to.equal('cohort_filters_parsing_error')
      }
      // each cohort's tree is read to order its dependencies and to match it: twice in all, not per request
      expect(reads).to.be.at.most(2 * cohorts.length)
    })

    it('does not fail a cohort without filters: it has no members', () => {
      const empty = dynamic(41, null)
      const result = run(cohortFlag('empty', inCohort(41)), [empty], {})
      expect(result.failed).to.equal(false)
      expect(result.enabled).to.equal(false)
    })
  })
})
