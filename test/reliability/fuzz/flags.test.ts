/**
 * Property-based fuzzing of the flag evaluator through its two doors: generated flag definitions
 * and person properties, evaluated by /flags and by posthog-node locally from the definitions the
 * service serves. /flags must never fail or stall, and both must agree wherever the SDK decides
 * locally. FLAG_FUZZ_RUNS sets the number of generated flag sets (25 by default).
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { PostHog } from 'posthog-node'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

const RUNS = Number(process.env.FLAG_FUZZ_RUNS ?? 25)
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_601)
const BOUND_MS = 3_000

// Kept to where posthog-node and the server are meant to agree (flags.md, "Known differences"):
// comparisons only between numbers, lists only for exact/is_not, no null values, ASCII text,
// patterns both regex flavours read alike.
const TEXT_KEYS = ['plan', 'email', 'country']
const text = fc.constantFrom('pro', 'free', 'PRO', 'fr', 'gb', 'a@b.com', '10', '', 'Pro plan')
const TEXT_OPERATORS = ['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'is_set', 'is_not_set']
const REGEXES = ['^p', 'o$', '.*', '[0-9]+', '^(a+)+$', 'pro|free', '\\d{2,}', '^$']

const filter = fc.oneof(
  fc.record({
    key: fc.constantFrom(...TEXT_KEYS),
    type: fc.constant('person'),
    operator: fc.constantFrom('exact', 'is_not'),
    value: fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 3 })),
  }),
  fc.record({
    key: fc.constantFrom(...TEXT_KEYS),
    type: fc.constant('person'),
    operator: fc.constantFrom(...TEXT_OPERATORS),
    value: fc.oneof(text, fc.constantFrom(...REGEXES)),
  }),
  fc.record({
    key: fc.constant('age'),
    type: fc.constant('person'),
    operator: fc.constantFrom('gt', 'gte', 'lt', 'lte', 'exact', 'is_not'),
    value: fc.integer({ min: -5, max: 120 }),
  }),
)
const variants = fc.integer({ min: 1, max: 4 }).map((n) =>
  Array.from({ length: n }, (_, i) => ({
    key: `v${i}`,
    rollout_percentage: i === n - 1 ? 100 - Math.floor(100 / n) * (n - 1) : Math.floor(100 / n),
  })),
)
const flagSet = fc
  .array(
    fc.record({
      groups: fc.array(
        fc.record({
          properties: fc.array(filter, { maxLength: 3 }),
          rollout_percentage: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant(undefined)),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      multivariate: fc.option(variants, { nil: undefined }),
      active: fc.boolean(),
    }),
    { minLength: 1, maxLength: 5 },
  )
  .map((flags) =>
    flags.map((f, i) => ({
      id: i + 1,
      key: `f${i}`,
      active: f.active,
      filters: { groups: f.groups, ...(f.multivariate ? { multivariate: { variants: f.multivariate } } : {}) },
    })),
  )
const personProperties = fc.record(
  { plan: text, email: text, country: text, age: fc.integer({ min: -5, max: 120 }) },
  { requiredKeys: [] },
)

describe(`fuzzing the flag evaluator (${RUNS} generated flag sets, seed ${SEED})`, function () {
  this.timeout(60_000 + RUNS * 2_000)
  let t: TestService
  let local: PostHog
  before(async () => {
    t = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'persons', options: { updateProperties: false } },
        { plugin: 'decide', options: { pollIntervalMs: 100 } },
        { plugin: 'sink-mongo', required: true },
      ],
    })
    local = new PostHog(t.project.api_token, {
      host: t.url,
      flushAt: 500,
      flushInterval: 0,
      fetchRetryCount: 0,
      personalApiKey: t.project.secret_api_token,
      featureFlagsPollingInterval: 600_000,
    })
  })
  after(async () => {
    await local?.shutdown()
    await t?.close()
  })

  it('answers /flags for every definition set without failing or stalling, and agrees with local evaluation', async () => {
    let compared = 0
    let refused = 0
    await fc.assert(
      fc.asyncProperty(
        flagSet,
        fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), personProperties), {
          minLength: 1,
          maxLength: 3,
        }),
        async (flags, users) => {
          const put = await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, { flags })
          expect(put.status, await put.clone().text()).to.be.oneOf([200, 400])
          if (put.status === 400) return void refused++
          await local.reloadFeatureFlags()
          for (const [distinctId, properties] of users) {
            const started = performance.now()
            const response = await fetch(`${t.url}/flags/?v=2`, {
              method: 'POST',
              body: JSON.stringify({
                api_key: t.project.api_token,
                distinct_id: distinctId,
                person_properties: properties,
              }),
            })
            expect(performance.now() - started).to.be.below(BOUND_MS)
            expect(response.status).to.equal(200)
            const body = (await response.json()) as {
              errorsWhileComputingFlags: boolean
              flags: Record<string, { enabled: boolean; variant?: string | null; failed?: boolean }>
            }
            const remote = Object.fromEntries(
              Object.entries(body.flags).map(([key, f]) => [key, f.variant ?? f.enabled]),
            )
            const viaDefinitions = await local.getAllFlags(distinctId, {
              personProperties: properties as Record<string, string>,
              onlyEvaluateLocally: true,
            })
            for (const [key, value] of Object.entries(viaDefinitions)) {
              if (value === undefined || body.flags[key]?.failed) continue
              const active = flags.find((f) => f.key === key)!.active
              expect(
                active ? remote[key] : false,
                `${key} for ${JSON.stringify(properties)} in ${JSON.stringify(flags)}`,
              ).to.equal(value)
              compared += 1
            }
          }
        },
      ),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    )
    console.log(
      `      flag fuzz: ${RUNS} flag sets (${refused} refused as invalid), ${compared} values compared between /flags and local evaluation`,
    )
    expect(compared).to.be.greaterThan(0)
  })
})
