/**
 * The real posthog-node SDK against the running service, for feature flags: remote evaluation
 * (POST /flags/?v=2) and local evaluation (GET /flags/definitions with the project's secret key as
 * `personalApiKey`) must give the same values and payloads for every user, and the hashes must be
 * PostHog's (the consistency tables published in PostHog's SDK test suites).
 */
import { expect } from 'chai'
import type { PostHog } from 'posthog-node'
import { posthogNodePair } from '../helpers/posthog-node.ts'
import type { PosthogNodePair } from '../helpers/posthog-node.ts'
import { startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'

type Props = Record<string, string | number>
const all = (properties: unknown[], rollout: number | null = 100) => [{ properties, rollout_percentage: rollout }]
const DEFINITIONS = {
  flags: [
    {
      id: 1,
      key: 'simple-flag',
      active: true,
      filters: { groups: all([], 45), payloads: { true: '{"simple":true}' } },
    },
    {
      id: 2,
      key: 'multivariate-flag',
      active: true,
      filters: {
        groups: all([], 55),
        multivariate: {
          variants: [
            ['first-variant', 50],
            ['second-variant', 20],
            ['third-variant', 20],
            ['fourth-variant', 5],
            ['fifth-variant', 5],
          ].map(([key, rollout_percentage]) => ({ key, rollout_percentage })),
        },
        payloads: { 'first-variant': '"one"', 'second-variant': '{"two":2}' },
      },
    },
    {
      id: 3,
      key: 'person-flag',
      active: true,
      filters: {
        groups: all([{ key: 'plan', value: ['pro', 'enterprise'], operator: 'exact', type: 'person' }]),
        payloads: { true: '"paid"' },
      },
    },
    {
      id: 4,
      key: 'group-flag',
      active: true,
      filters: {
        aggregation_group_type_index: 0,
        groups: all([{ key: 'industry', value: 'tech', operator: 'exact', type: 'group', group_type_index: 0 }], 80),
      },
    },
    {
      id: 5,
      key: 'dependent-flag',
      active: true,
      filters: { groups: all([{ key: '1', value: true, operator: 'flag_evaluates_to', type: 'flag' }]) },
    },
    { id: 6, key: 'cohort-flag', active: true, filters: { groups: all([{ key: 'id', value: 30, type: 'cohort' }]) } },
    {
      id: 7,
      key: 'age-flag',
      active: true,
      filters: {
        groups: [
          ...all([{ key: 'age', value: 40, operator: 'gte', type: 'person' }]),
          {
            properties: [{ key: 'email', value: '@corp.example$', operator: 'regex', type: 'person' }],
            rollout_percentage: 30,
          },
        ],
      },
    },
  ],
  group_type_mapping: { 0: 'company' },
  cohorts: {
    30: {
      type: 'OR',
      values: [
        { type: 'AND', values: [{ key: 'email', value: 'corp.example', operator: 'icontains', type: 'person' }] },
      ],
    },
  },
}

interface User {
  distinctId: string
  personProperties: Props
  groups: Record<string, string>
  groupProperties: Record<string, Props>
}

const USERS: User[] = Array.from({ length: 40 }, (_, i) => ({
  distinctId: `distinct_id_${i}`,
  personProperties: {
    plan: ['free', 'pro', 'enterprise'][i % 3],
    email: i % 4 === 0 ? `u${i}@corp.example` : `u${i}@home.example`,
    age: 20 + i,
  },
  groups: { company: `company-${i % 5}` },
  groupProperties: { company: { industry: i % 2 === 0 ? 'tech' : 'retail' } },
}))

describe('the real posthog-node SDK evaluating flags against the service', () => {
  let t: TestService
  let remote: PostHog
  let local: PostHog
  let pair: PosthogNodePair
  before(async () => {
    t = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'persons' },
        { plugin: 'group-update' },
        { plugin: 'decide' },
        { plugin: 'sink-mongo', required: true },
      ],
    })
    expect((await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, DEFINITIONS)).status).to.equal(200)
    ;({ remote, local } = pair = await posthogNodePair(t))
  })
  after(async () => {
    await pair?.shutdown()
    await t?.close()
  })

  const options = (user: User) => ({
    personProperties: user.personProperties,
    groups: user.groups,
    groupProperties: user.groupProperties,
    sendFeatureFlagEvents: false,
  })

  it('answers PostHog’s published consistency values remotely (simple-flag 45%, multivariate-flag 55%)', async () => {
    const simple: Array<[string, boolean]> = [
      ['distinct_id_0', false],
      ['distinct_id_1', true],
    ]
    const multivariate: Array<[string, string | boolean]> = [
      ['distinct_id_0', 'second-variant'],
      ['distinct_id_2', 'first-variant'],
      ['distinct_id_3', false],
    ]
    for (const [id, value] of simple)
      expect(await remote.getFeatureFlag('simple-flag', id, { sendFeatureFlagEvents: false }), id).to.equal(value)
    for (const [id, value] of multivariate)
      expect(await remote.getFeatureFlag('multivariate-flag', id, { sendFeatureFlagEvents: false }), id).to.equal(value)
  })

  it('gives the same values remotely and locally for every user, with every flag decided locally', async () => {
    let enabled = 0
    for (const user of USERS) {
      const viaServer = await remote.getAllFlags(user.distinctId, options(user))
      const viaDefinitions = await local.getAllFlags(user.distinctId, { ...options(user), onlyEvaluateLocally: true })
      expect(Object.keys(viaDefinitions).sort(), user.distinctId).to.deep.equal(
        DEFINITIONS.flags.map((f) => f.key).sort(),
      )
      expect(viaDefinitions, user.distinctId).to.deep.equal(viaServer)
      enabled += Object.values(viaServer).filter((value) => value !== false).length
    }
    expect(enabled, 'the users exercise both outcomes').to.be.within(
      USERS.length,
      USERS.length * (DEFINITIONS.flags.length - 1),
    )
  })

  it('gives the same payloads remotely and locally', async () => {
    for (const user of USERS.slice(0, 12)) {
      const viaServer = await remote.getAllFlagsAndPayloads(user.distinctId, options(user))
      const viaDefinitions = await local.getAllFlagsAndPayloads(user.distinctId, {
        ...options(user),
        onlyEvaluateLocally: true,
      })
      // the SDK lists a flag without payload as undefined when the server sends `payload: null`, as PostHog's does
      const defined = (payloads: Record<string, unknown> = {}) =>
        Object.fromEntries(Object.entries(payloads).filter(([, value]) => value !== undefined))
      expect(viaDefinitions.featureFlagPayloads, user.distinctId).to.deep.equal(defined(viaServer.featureFlagPayloads))
    }
    const pro = USERS[1]
    expect(await remote.getFeatureFlagPayload('person-flag', pro.distinctId, undefined, options(pro))).to.equal('paid')
    expect(
      await local.getFeatureFlagPayload('person-flag', pro.distinctId, undefined, {
        ...options(pro),
        onlyEvaluateLocally: true,
      }),
    ).to.equal('paid')
  })

  it('evaluates group flags from the groups and group properties passed in, remotely and locally', async () => {
    const tech = USERS.find((u) => u.groupProperties.company.industry === 'tech') as User
    const remoteValue = await remote.getFeatureFlag('group-flag', tech.distinctId, options(tech))
    expect(remoteValue).to.equal(
      await local.getFeatureFlag('group-flag', tech.distinctId, { ...options(tech), onlyEvaluateLocally: true }),
    )
    expect(await remote.getFeatureFlag('group-flag', tech.distinctId, { sendFeatureFlagEvents: false })).to.equal(false)
  })

  it('answers the recommended evaluateFlags snapshot from one /flags request', async () => {
    const pro = USERS[1]
    const snapshot = await remote.evaluateFlags(pro.distinctId, {
      personProperties: pro.personProperties,
      groups: pro.groups,
      groupProperties: pro.groupProperties,
    })
    expect(snapshot.getFlag('person-flag')).to.equal(true)
    expect(snapshot.getFlagPayload('person-flag')).to.equal('paid')
    expect(snapshot.getFlag('simple-flag')).to.equal(
      await local.getFeatureFlag('simple-flag', pro.distinctId, { ...options(pro), onlyEvaluateLocally: true }),
    )
  })

  it('reads a flag’s remote config payload with the secret key', async () => {
    expect(await local.getRemoteConfigPayload('person-flag')).to.equal('paid')
  })

  it('sees a flag change remotely at once and locally after the SDK polls again', async () => {
    const patched = await t.admin('PATCH', `/api/projects/${t.project.id}/feature_flags/3/`, { active: false })
    expect(patched.status).to.equal(200)
    const pro = USERS[1]
    expect(
      await remote.getFeatureFlag('person-flag', pro.distinctId, options(pro)),
      'remote: an inactive flag is absent',
    ).to.equal(undefined)
    await local.reloadFeatureFlags()
    expect(
      await local.getFeatureFlag('person-flag', pro.distinctId, { ...options(pro), onlyEvaluateLocally: true }),
      'local: an inactive flag is false',
    ).to.equal(false)
  })
})
