/**
 * The official OpenFeature server SDK with the OFREP provider, unmodified, against the service:
 * boolean, string, number and object evaluations with their reasons and variants, a missing flag, a
 * wrong key; and the OFREP values equal /flags?v=2's for every user and flag.
 */
import { expect } from 'chai'
import { OpenFeature, ErrorCode } from '@openfeature/server-sdk'
import type { Client } from '@openfeature/server-sdk'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { writeMaxMindCityFixture } from '../plugins/geoip/fixtures.ts'

const all = (properties: unknown[], rollout: number | null = 100, extra: Record<string, unknown> = {}) => [
  { properties, rollout_percentage: rollout, ...extra },
]
const pro = { key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }
const DEFINITIONS = {
  flags: [
    { id: 1, key: 'everyone', active: true, filters: { groups: all([]), payloads: { true: '{"banner":"hello"}' } } },
    { id: 2, key: 'half', active: true, filters: { groups: all([], 50) } },
    {
      id: 3,
      key: 'colour',
      active: true,
      filters: {
        groups: all([]),
        multivariate: {
          variants: [
            { key: 'red', rollout_percentage: 50 },
            { key: 'blue', rollout_percentage: 50 },
          ],
        },
      },
    },
    { id: 4, key: 'pro-only', active: true, filters: { groups: all([pro]) } },
    {
      id: 5,
      key: 'max-items',
      active: true,
      is_remote_configuration: true,
      filters: { groups: all([]), payloads: { true: '42' } },
    },
    {
      id: 6,
      key: 'layout',
      active: true,
      is_remote_configuration: true,
      filters: { groups: all([]), payloads: { true: '{"columns":3,"dense":true}' } },
    },
    { id: 7, key: 'switched-off', active: false, filters: { groups: all([]) } },
    {
      id: 8,
      key: 'company-beta',
      active: true,
      filters: {
        aggregation_group_type_index: 0,
        groups: all([{ key: 'tier', value: 'gold', operator: 'exact', type: 'group', group_type_index: 0 }]),
      },
    },
    {
      id: 10,
      key: 'uk-only',
      active: true,
      filters: { groups: all([{ key: '$geoip_country_code', value: ['GB'], operator: 'exact', type: 'person' }]) },
    },
    {
      id: 9,
      key: 'pro-colour',
      active: true,
      filters: {
        groups: all([pro], 100, { variant: 'blue' }),
        multivariate: {
          variants: [
            { key: 'red', rollout_percentage: 100 },
            { key: 'blue', rollout_percentage: 0 },
          ],
        },
      },
    },
  ],
  group_type_mapping: { 0: 'company' },
}

describe('OpenFeature OFREP provider (server) against the service', () => {
  let t: TestService
  let client: Client
  before(async () => {
    t = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'geoip', options: { databasePath: writeMaxMindCityFixture() } },
        { plugin: 'persons' },
        { plugin: 'decide' },
        { plugin: 'sink-mongo', required: true },
      ],
    })
    expect((await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, DEFINITIONS)).status).to.equal(200)
    await OpenFeature.setProviderAndWait(
      new OFREPProvider({ baseUrl: t.url, headers: [['X-API-Key', t.project.api_token]] }),
    )
    client = OpenFeature.getClient()
  })
  after(async () => {
    await OpenFeature.close()
    await t?.close()
  })

  it('evaluates booleans, strings, numbers and objects with their reasons', async () => {
    const ctx = { targetingKey: 'user-1', plan: 'pro' }
    const everyone = await client.getBooleanDetails('everyone', false, ctx)
    expect(everyone).to.include({ value: true, reason: 'TARGETING_MATCH' })
    expect(everyone.flagMetadata).to.include({ payload: '{"banner":"hello"}', posthogReason: 'condition_match' })
    const colour = await client.getStringDetails('colour', 'none', ctx)
    expect(['red', 'blue']).to.include(colour.value)
    expect(colour).to.include({ reason: 'SPLIT', variant: colour.value })
    expect(await client.getStringDetails('pro-colour', 'none', ctx)).to.include({
      value: 'blue',
      variant: 'blue',
      reason: 'TARGETING_MATCH',
    })
    expect(await client.getNumberValue('max-items', 0, ctx)).to.equal(42)
    expect(await client.getObjectValue('layout', {}, ctx)).to.deep.equal({ columns: 3, dense: true })
    expect(await client.getBooleanDetails('pro-only', true, { targetingKey: 'user-1', plan: 'free' })).to.include({
      value: false,
      reason: 'DEFAULT',
    })
    expect(await client.getBooleanDetails('switched-off', true, ctx)).to.include({ value: false, reason: 'DISABLED' })
    expect(
      await client.getBooleanValue('company-beta', false, {
        targetingKey: 'user-1',
        groups: { company: 'acme' },
        groupProperties: { company: { tier: 'gold' } },
      }),
    ).to.equal(true)
  })

  it('answers a missing flag, a wrong type and a missing targeting key as OpenFeature errors', async () => {
    const missing = await client.getBooleanDetails('no-such-flag', false, { targetingKey: 'user-1' })
    expect(missing).to.include({ value: false, errorCode: ErrorCode.FLAG_NOT_FOUND, reason: 'ERROR' })
    expect(await client.getNumberDetails('everyone', 7, { targetingKey: 'user-1' })).to.include({
      value: 7,
      errorCode: ErrorCode.TYPE_MISMATCH,
    })
    expect(await client.getBooleanDetails('half', false, {})).to.include({
      value: false,
      errorCode: ErrorCode.TARGETING_KEY_MISSING,
    })
    expect(await client.getBooleanDetails('everyone', false, {}), 'a 100 % flag needs no key').to.include({
      value: true,
    })
  })

  it('refuses a wrong project key', async () => {
    const wrong = OpenFeature.getClient('wrong-key')
    await OpenFeature.setProviderAndWait(
      'wrong-key',
      new OFREPProvider({ baseUrl: t.url, headers: [['Authorization', 'Bearer phc_nobody']] }),
    )
    const details = await wrong.getBooleanDetails('everyone', false, { targetingKey: 'user-1' })
    expect(details).to.include({ value: false, reason: 'ERROR' })
    expect(details.errorCode).to.be.a('string')
  })

  it('gives the same values as /flags?v=2 for every user and flag', async () => {
    for (let i = 0; i < 40; i++) {
      const person = { plan: i % 3 === 0 ? 'pro' : 'free' }
      const groups = { company: `c-${i % 4}` }
      const groupProperties = { company: { tier: i % 2 === 0 ? 'gold' : 'silver' } }
      const flags = await fetch(`${t.url}/flags/?v=2`, {
        method: 'POST',
        body: JSON.stringify({
          token: t.project.api_token,
          distinct_id: `user-${i}`,
          person_properties: person,
          groups,
          group_properties: groupProperties,
        }),
      })
      const posthog = ((await flags.json()) as { flags: Record<string, { enabled: boolean; variant: string | null }> })
        .flags
      const bulk = await fetch(`${t.url}/ofrep/v1/evaluate/flags`, {
        method: 'POST',
        headers: { 'X-API-Key': t.project.api_token, 'Content-Type': 'application/json' },
        body: JSON.stringify({ context: { targetingKey: `user-${i}`, ...person, groups, groupProperties } }),
      })
      const ofrep = ((await bulk.json()) as { flags: Array<{ key: string; value: unknown }> }).flags
      for (const item of ofrep) {
        const expected = posthog[item.key]
        if (!expected) {
          expect(item, item.key).to.include({ value: false, reason: 'DISABLED' })
          continue
        }
        const remoteConfig = DEFINITIONS.flags.find((f) => f.key === item.key)?.is_remote_configuration
        if (remoteConfig) expect(expected.enabled, item.key).to.equal(true)
        else
          expect(item.value, `${item.key} for user-${i}`).to.equal(
            expected.enabled ? (expected.variant ?? true) : false,
          )
      }
    }
  })

  it('answers the bulk evaluation with an ETag and 304 for an unchanged If-None-Match', async () => {
    const post = (headers: Record<string, string> = {}) =>
      fetch(`${t.url}/ofrep/v1/evaluate/flags`, {
        method: 'POST',
        headers: { 'X-API-Key': t.project.api_token, 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify({ context: { targetingKey: 'user-3', plan: 'free' } }),
      })
    const first = await post()
    const etag = first.headers.get('ETag') as string
    expect(first.status).to.equal(200)
    expect((await post({ 'If-None-Match': etag })).status).to.equal(304)
    expect(
      (await t.admin('PATCH', `/api/projects/${t.project.id}/feature_flags/4/`, { filters: { groups: all([]) } }))
        .status,
    ).to.equal(200)
    const changed = await post({ 'If-None-Match': etag })
    expect(changed.status).to.equal(200)
    expect(changed.headers.get('ETag')).to.not.equal(etag)
  })

  it('reads the stored person as /flags does: a captured $set changes the value and the ETag at once', async () => {
    const bulk = async (headers: Record<string, string> = {}) => {
      const response = await fetch(`${t.url}/ofrep/v1/evaluate/flags`, {
        method: 'POST',
        headers: { 'X-API-Key': t.project.api_token, 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify({ context: { targetingKey: 'stored-person' } }),
      })
      const flags =
        response.status === 200
          ? ((await response.json()) as { flags: Array<{ key: string; value: unknown }> }).flags
          : []
      return {
        status: response.status,
        etag: response.headers.get('ETag') as string,
        proOnly: flags.find((f) => f.key === 'pro-colour')?.value,
      }
    }
    const before = await bulk()
    expect(before.proOnly).to.equal(false)
    const captured = await fetch(`${t.url}/i/v0/e/`, {
      method: 'POST',
      body: JSON.stringify({
        api_key: t.project.api_token,
        event: '$set',
        distinct_id: 'stored-person',
        properties: { $set: { plan: 'pro' } },
      }),
    })
    expect(captured.status).to.equal(200)
    const after = await bulk({ 'If-None-Match': before.etag })
    expect(after.status).to.equal(200)
    expect(after.proOnly).to.equal('blue')
    expect(after.etag).to.not.equal(before.etag)
  })

  it('takes the $geoip_* properties from context.ip, as /flags does from X-Forwarded-For', async () => {
    expect(await client.getBooleanValue('uk-only', false, { targetingKey: 'traveller', ip: '81.2.69.160' })).to.equal(
      true,
    )
    expect(await client.getBooleanValue('uk-only', true, { targetingKey: 'traveller', ip: '2001:4860::1' })).to.equal(
      false,
    )
    const viaFlags = await fetch(`${t.url}/flags/?v=2`, {
      method: 'POST',
      headers: { 'X-Forwarded-For': '81.2.69.160' },
      body: JSON.stringify({ token: t.project.api_token, distinct_id: 'traveller' }),
    })
    expect(
      ((await viaFlags.json()) as { flags: Record<string, { enabled: boolean }> }).flags['uk-only'].enabled,
    ).to.equal(true)
  })

  it('answers OFREP’s error bodies for a bad body, a bad context and a missing key', async () => {
    const post = (path: string, body: string, headers: Record<string, string> = { 'X-API-Key': t.project.api_token }) =>
      fetch(`${t.url}/ofrep/v1/evaluate/flags${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body,
      })
    const cases: Array<[Promise<Response>, number, string | undefined]> = [
      [post('/everyone', '{"context":'), 400, 'PARSE_ERROR'],
      [post('/everyone', '{"context": {"targetingKey": 5}}'), 400, 'INVALID_CONTEXT'],
      [post('', '{"context": {"groups": "acme"}}'), 400, 'INVALID_CONTEXT'],
      [post('/half', '{"context": {}}'), 400, 'TARGETING_KEY_MISSING'],
      [post('/nope', '{"context": {"targetingKey": "u"}}'), 404, 'FLAG_NOT_FOUND'],
      [post('', '{}', {}), 401, undefined],
    ]
    for (const [pending, status, code] of cases) {
      const response = await pending
      const body = (await response.json()) as { errorCode?: string; errorDetails?: string }
      expect([response.status, body.errorCode], code).to.deep.equal([status, code])
      expect(body.errorDetails).to.be.a('string')
    }
  })
})
