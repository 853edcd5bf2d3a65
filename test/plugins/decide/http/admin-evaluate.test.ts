/**
 * The flag dry run through real HTTP: the same values and payloads as /flags for the same users,
 * the stored person read as /flags reads it, and the source of every property.
 */
import { expect } from 'chai'
import { startTestService } from '../../../helpers/service.ts'
import type { TestService } from '../../../helpers/service.ts'
import { writeMaxMindCityFixture } from '../../geoip/fixtures.ts'
import { postFlags } from './fixtures.ts'

type Json = Record<string, any>

describe('decide admin API: the flag dry run with reasons', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'geoip', options: { databasePath: writeMaxMindCityFixture() } },
        { plugin: 'alias-resolve' },
        { plugin: 'person-update' },
        { plugin: 'group-update' },
        { plugin: 'decide' },
        { plugin: 'sink-mongo', required: true },
      ],
    })
    const create = async (body: Json) =>
      expect((await t.admin('POST', `/api/projects/${t.project.id}/feature_flags/`, body)).status).to.equal(201)
    await create({
      key: 'pro-30',
      filters: {
        groups: [
          { properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 30 },
        ],
      },
    })
    await create({
      key: 'multi',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'red', rollout_percentage: 50 },
            { key: 'blue', rollout_percentage: 50 },
          ],
        },
        payloads: { red: '{"colour":"#f00"}', blue: '{"colour":"#00f"}' },
      },
    })
    await create({
      key: 'british',
      filters: {
        groups: [
          { properties: [{ key: '$geoip_country_code', value: 'GB', operator: 'exact' }], rollout_percentage: 100 },
        ],
      },
    })
    await create({
      key: 'switched-off',
      active: false,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    const batch = Array.from({ length: 10 }, (_, i) => ({
      event: '$set',
      distinct_id: `user-${i}`,
      properties: { $set: { plan: i % 2 === 0 ? 'pro' : 'free', email: `user-${i}@example.com` } },
    }))
    const captured = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: t.project.api_token, batch }),
    })
    expect(captured.status).to.equal(200)
  })
  after(() => t.close())

  const dryRun = async (body: unknown) => {
    const response = await t.admin('POST', `/api/projects/${t.project.id}/feature_flags/evaluate`, body)
    return { status: response.status, body: (await response.json()) as Json }
  }

  it('answers the values and payloads /flags answers, for ten stored users', async () => {
    for (let i = 0; i < 10; i++) {
      const distinctId = `user-${i}`
      const served = (
        (await (
          await postFlags(t, '/flags/?v=2', { token: t.project.api_token, distinct_id: distinctId })
        ).json()) as Json
      ).flags
      const { status, body } = await dryRun({ distinct_id: distinctId })
      expect(status).to.equal(200)
      expect(body.stored_person).to.equal(true)
      for (const key of ['pro-30', 'multi', 'british']) {
        const flag = body.flags[key]
        expect(
          { enabled: flag.enabled, variant: flag.variant, payload: flag.payload, reason: flag.reason },
          `${key} ${distinctId}`,
        ).to.deep.equal({
          enabled: served[key].enabled,
          variant: served[key].variant ?? null,
          payload: served[key].metadata.payload ?? null,
          reason: served[key].reason,
        })
      }
      if (i % 2 === 1) expect(body.flags['pro-30'].conditions[0].filter).to.include({ key: 'plan', actual: 'free' })
    }
  })

  it('says where each property came from: the stored person, the request, GeoIP, or derived', async () => {
    const { body } = await dryRun({
      distinct_id: 'user-0',
      person_properties: { email: 'override@example.com' },
      ip: '81.2.69.142',
    })
    expect(body.properties.person.plan).to.deep.equal({ value: 'pro', source: 'stored' })
    expect(body.properties.person.email).to.deep.equal({ value: 'override@example.com', source: 'request' })
    expect(body.properties.person.$geoip_country_code).to.deep.equal({ value: 'GB', source: 'geoip' })
    expect(body.properties.person.distinct_id).to.deep.equal({ value: 'user-0', source: 'derived' })
    expect(body.flags.british).to.deep.include({
      enabled: true,
      value: true,
      detail: 'condition set 1 matched ($geoip_country_code exact "GB", rollout 100%)',
    })
    expect(body.flags['switched-off']).to.deep.include({
      enabled: false,
      reason: { code: 'flag_disabled', condition_index: null, description: 'Feature flag is disabled' },
    })
  })

  it('explains a user nobody has stored', async () => {
    const { body } = await dryRun({
      distinct_id: 'stranger',
      groups: { company: 'acme' },
      group_properties: { company: { tier: 'gold' } },
    })
    expect(body.stored_person).to.equal(false)
    expect(body.flags['pro-30'].conditions[0]).to.deep.include({ verdict: 'property_missing' })
    expect(body.flags.british.detail).to.match(/person property "\$geoip_country_code" is not set/)
  })

  it('refuses bad input with 400 naming the field, and an unknown project with 404', async () => {
    expect((await dryRun({})).body).to.include({ code: 'invalid_input', attr: 'distinct_id' })
    expect((await dryRun({ distinct_id: 'a', ip: 'not-an-ip' })).body).to.include({ attr: 'ip' })
    expect((await dryRun({ distinct_id: 'a', person_properties: [1] })).body).to.include({ attr: 'person_properties' })
    expect((await dryRun({ distinct_id: 'a', groups: { company: { nested: 1 } } })).body.attr).to.match(/^groups/)
    expect((await dryRun({ distinct_id: 'a', evaluation_runtime: 'mobile' })).body).to.include({
      attr: 'evaluation_runtime',
    })
    expect((await dryRun({ distinct_id: 'a', colour: 'red' })).body).to.include({ attr: 'colour' })
    const unknown = await t.admin('POST', '/api/projects/999999/feature_flags/evaluate', { distinct_id: 'a' })
    expect(unknown.status).to.equal(404)
  })
})
