/**
 * Definitions the SDKs evaluate locally must give the same values from the service: cohorts nested
 * at any depth (a flat group of filters, groups inside groups, negated and chained cohort
 * references) and device-id bucketing declared at the flag's top level or inside `filters`, with
 * null or empty meaning distinct_id. The real posthog-node evaluates both ways.
 */
import { expect } from 'chai'
import type { PostHog } from 'posthog-node'
import { posthogNodePair } from '../helpers/posthog-node.ts'
import type { PosthogNodePair } from '../helpers/posthog-node.ts'
import { startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'

const person = (key: string, value: unknown, operator = 'exact', negation = false) => ({
  key,
  value,
  operator,
  type: 'person',
  negation,
})
const cohort = (id: number, operator = 'in', negation = false) => ({
  key: 'id',
  value: id,
  type: 'cohort',
  operator,
  negation,
})
const targeting = (id: number, filters: unknown[], rollout = 100) => ({
  id,
  key: `flag-${id}`,
  active: true,
  filters: { groups: [{ properties: filters, rollout_percentage: rollout }] },
})
const rollout = (id: number, extra: Record<string, unknown>, filtersExtra: Record<string, unknown> = {}) => ({
  id,
  key: `bucketed-${id}`,
  active: true,
  ...extra,
  filters: {
    groups: [{ properties: [], rollout_percentage: 50 }],
    multivariate: {
      variants: [
        { key: 'a', rollout_percentage: 50 },
        { key: 'b', rollout_percentage: 50 },
      ],
    },
    ...filtersExtra,
  },
})

const DEFINITIONS = {
  flags: [
    targeting(1, [cohort(10)]),
    targeting(2, [cohort(11)]),
    targeting(3, [cohort(12)]),
    targeting(4, [cohort(13)]),
    targeting(5, [cohort(14, 'not_in')]),
    rollout(20, { bucketing_identifier: 'device_id' }),
    rollout(21, {}, { bucketing_identifier: 'device_id' }),
    rollout(22, { bucketing_identifier: null }),
    rollout(23, { bucketing_identifier: '' }, { bucketing_identifier: null }),
  ],
  cohorts: {
    // one group, filters directly in its values
    10: { type: 'OR', values: [person('country', 'FR'), person('plan', 'pro')] },
    // groups four deep (the SDK reads a list as groups or as filters by its first entry, so none mixes both)
    11: {
      type: 'AND',
      values: [
        { type: 'AND', values: [person('beta', 'yes')] },
        {
          type: 'OR',
          values: [
            { type: 'OR', values: [person('country', 'DE')] },
            { type: 'AND', values: [{ type: 'AND', values: [person('plan', 'pro'), person('age', 30, 'gt')] }] },
          ],
        },
      ],
    },
    // a negated cohort reference inside an OR group
    12: { type: 'OR', values: [{ type: 'OR', values: [cohort(10, 'in', true), person('age', 60, 'gte')] }] },
    // a chain: 13 → 11 → filters, and 13 → 12 → 10
    13: {
      type: 'AND',
      values: [
        { type: 'AND', values: [cohort(11)] },
        { type: 'OR', values: [cohort(12, 'not_in')] },
      ],
    },
    14: { type: 'AND', values: [person('email', '@corp.example', 'icontains', true)] },
  },
}

const USERS = Array.from({ length: 48 }, (_, i) => ({
  distinctId: `user-${i}`,
  personProperties: {
    country: ['FR', 'DE', 'US', 'IT'][i % 4],
    plan: ['free', 'pro', 'team'][i % 3],
    beta: i % 2 === 0 ? 'yes' : 'no',
    age: 18 + ((i * 7) % 50),
    email: i % 5 === 0 ? `u${i}@corp.example` : `u${i}@home.example`,
    $device_id: `device-${i % 12}`,
  },
}))

describe('posthog-node and the service agree on nested cohorts and device-id bucketing', () => {
  let t: TestService
  let remote: PostHog
  let local: PostHog
  let pair: PosthogNodePair
  before(async () => {
    t = await startTestService({
      plugins: [{ plugin: 'validate' }, { plugin: 'decide' }, { plugin: 'sink-mongo', required: true }],
    })
    const imported = await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, DEFINITIONS)
    expect(imported.status, await imported.clone().text()).to.equal(200)
    ;({ remote, local } = pair = await posthogNodePair(t))
  })
  after(async () => {
    await pair?.shutdown()
    await t?.close()
  })

  it('gives every user the same values remotely and locally, with every flag decided locally', async () => {
    const seen = new Map<string, Set<unknown>>()
    for (const user of USERS) {
      const options = { personProperties: user.personProperties, sendFeatureFlagEvents: false }
      const viaServer = await remote.getAllFlags(user.distinctId, options)
      const viaDefinitions = await local.getAllFlags(user.distinctId, { ...options, onlyEvaluateLocally: true })
      expect(Object.keys(viaDefinitions).sort(), user.distinctId).to.deep.equal(
        DEFINITIONS.flags.map((f) => f.key).sort(),
      )
      expect(viaServer, user.distinctId).to.deep.equal(viaDefinitions)
      for (const [key, value] of Object.entries(viaServer)) seen.set(key, (seen.get(key) ?? new Set()).add(value))
    }
    for (const flag of DEFINITIONS.flags)
      expect([...(seen.get(flag.key) ?? [])].length, `${flag.key} takes more than one value`).to.be.greaterThan(1)
  })

  it('hashes the device id for device-bucketed flags, and the distinct id when the field is null or empty', async () => {
    const sameDevice = USERS.filter((u) => u.personProperties.$device_id === 'device-3')
    const values = async (key: string) =>
      Promise.all(
        sameDevice.map((u) =>
          remote.getFeatureFlag(key, u.distinctId, {
            personProperties: u.personProperties,
            sendFeatureFlagEvents: false,
          }),
        ),
      )
    for (const key of ['bucketed-20', 'bucketed-21']) expect(new Set(await values(key)).size, key).to.equal(1)
    const distinctIds = Array.from({ length: 40 }, (_, i) => `other-${i}`)
    const byDistinctId = await Promise.all(
      distinctIds.map((id) =>
        remote.getFeatureFlag('bucketed-22', id, {
          personProperties: { $device_id: 'device-3' },
          sendFeatureFlagEvents: false,
        }),
      ),
    )
    expect(new Set(byDistinctId).size, 'one device, many distinct ids: several values').to.be.greaterThan(1)
  })

  it('serves the definitions with the bucketing identifier at the top level, where posthog-node reads it', async () => {
    const response = await fetch(`${t.url}/flags/definitions?token=${t.project.api_token}`, {
      headers: { Authorization: `Bearer ${t.project.secret_api_token}` },
    })
    const body = (await response.json()) as { flags: Array<{ key: string; bucketing_identifier: string }> }
    const identifiers = Object.fromEntries(
      body.flags.filter((f) => f.key.startsWith('bucketed')).map((f) => [f.key, f.bucketing_identifier]),
    )
    expect(identifiers).to.deep.equal({
      'bucketed-20': 'device_id',
      'bucketed-21': 'device_id',
      'bucketed-22': 'distinct_id',
      'bucketed-23': 'distinct_id',
    })
  })
})
