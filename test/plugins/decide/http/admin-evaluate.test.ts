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

  describe('groups, group properties and holdouts, as /flags?v=2 has them', () => {
    const companies = Array.from({ length: 10 }, (_, i) => `co-${i}`)
    before(async () => {
      const batch = companies.map((key, i) => ({
        event: '$groupidentify',
        distinct_id: 'admin',
        properties: {
          $group_type: 'company',
          $group_key: key,
          $group_set: { industry: i % 3 === 0 ? 'retail' : 'tech', size: i * 10 },
        },
      }))
      const captured = await fetch(`${t.url}/batch/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ api_key: t.project.api_token, batch }),
      })
      expect(captured.status).to.equal(200)
      const types = (await (await t.admin('GET', `/api/projects/${t.project.id}/group_types`)).json()) as Json
      expect(types.results.map((r: Json) => [r.group_type, r.group_type_index])).to.deep.equal([['company', 0]])
      for (const body of [
        {
          key: 'tech-companies',
          filters: {
            aggregation_group_type_index: 0,
            groups: [
              {
                properties: [
                  { key: 'industry', value: ['tech'], operator: 'exact', type: 'group', group_type_index: 0 },
                ],
                rollout_percentage: 70,
              },
            ],
            payloads: { true: '"for tech"' },
          },
        },
        {
          key: 'held-back',
          filters: {
            holdout: { id: 9, exclusion_percentage: 40 },
            groups: [{ properties: [], rollout_percentage: 100 }],
            multivariate: {
              variants: [
                { key: 'control', rollout_percentage: 50 },
                { key: 'test', rollout_percentage: 50 },
              ],
            },
            payloads: { 'holdout-9': '{"baseline":true}', test: '"t"' },
          },
        },
      ]) {
        const created = await t.admin('POST', `/api/projects/${t.project.id}/feature_flags/`, body)
        expect(created.status, await created.clone().text()).to.equal(201)
      }
    })

    /** The dry run's value, payload and reason of `key`, and /flags?v=2's for the same request. */
    async function both(key: string, request: Json) {
      const served = (
        (await (await postFlags(t, '/flags/?v=2', { token: t.project.api_token, ...request })).json()) as Json
      ).flags[key]
      const { status, body } = await dryRun(request)
      expect(status).to.equal(200)
      const flag = body.flags[key]
      expect(
        { enabled: flag.enabled, variant: flag.variant, payload: flag.payload, reason: flag.reason },
        `${key} ${JSON.stringify(request)}`,
      ).to.deep.equal({
        enabled: served.enabled,
        variant: served.variant ?? null,
        payload: served.metadata.payload ?? null,
        reason: served.reason,
      })
      return { flag, body }
    }

    it('answers a group flag for ten groups as /flags does, with stored group properties and request ones over them', async () => {
      const reasons = new Set<string>()
      for (const [i, company] of companies.entries()) {
        const stored = await both('tech-companies', { distinct_id: 'someone', groups: { company } })
        expect(stored.body.properties.groups.company).to.deep.equal({
          industry: { value: i % 3 === 0 ? 'retail' : 'tech', source: 'stored' },
          size: { value: i * 10, source: 'stored' },
        })
        reasons.add(stored.flag.reason.code)
        if (i % 3 === 0) expect(stored.flag.conditions[0].filter).to.include({ key: 'industry', actual: 'retail' })
        // a request property overrides the stored one, and says so
        const industry = i % 3 === 0 ? 'tech' : 'retail'
        const overridden = await both('tech-companies', {
          distinct_id: 'someone',
          groups: { company },
          group_properties: { company: { industry } },
        })
        expect(overridden.body.properties.groups.company).to.deep.equal({
          industry: { value: industry, source: 'request' },
          size: { value: i * 10, source: 'stored' },
        })
        reasons.add(overridden.flag.reason.code)
      }
      // the groups cover every outcome: matched, property not matched, out of the 70% rollout
      expect([...reasons].sort()).to.deep.equal(['condition_match', 'no_condition_match', 'out_of_rollout_bound'])
    })

    it('says a group flag needs the group when the request names none, with the reason /flags gives', async () => {
      for (const request of [{ distinct_id: 'someone' }, { distinct_id: 'someone', groups: { team: 'red' } }]) {
        const { flag } = await both('tech-companies', request)
        expect(flag.reason.code).to.equal('no_group_type')
        expect(flag.detail).to.equal(
          'the flag is evaluated per company and the request names no company in its groups: give the company key to evaluate it',
        )
        expect(flag.conditions[0]).to.deep.include({ verdict: 'group_not_provided' })
      }
    })

    it('says which users are held out, with their bucket, for ten users as /flags answers them', async () => {
      let held = 0
      for (let i = 0; i < 10; i++) {
        const { flag } = await both('held-back', { distinct_id: `user-${i}` })
        expect(flag.holdout).to.deep.include({
          id: 9,
          exclusion_percentage: 40,
          held_out: flag.variant === 'holdout-9',
        })
        if (flag.holdout.held_out) {
          held++
          expect(flag.payload).to.equal('{"baseline":true}')
          expect(flag.detail).to.match(
            /^held out: the identifier's holdout bucket [\d.]+ is within holdout 9's 40% exclusion/,
          )
        } else
          expect(flag.detail).to.match(/\(not held out: holdout bucket [\d.]+ is above holdout 9's 40% exclusion\)$/)
      }
      expect(held).to.be.within(1, 9)
    })

    it('refuses a holdout outside 0–100 or without an integer id, naming the field', async () => {
      const create = (holdout: unknown) =>
        t.admin('POST', `/api/projects/${t.project.id}/feature_flags/`, {
          key: 'bad-holdout',
          filters: { groups: [], holdout },
        })
      const tooMuch = await create({ id: 1, exclusion_percentage: 101 })
      expect(tooMuch.status).to.equal(400)
      expect(await tooMuch.json()).to.include({ attr: 'filters.holdout.exclusion_percentage' })
      expect(await (await create({ id: 1.5, exclusion_percentage: 10 })).json()).to.include({
        attr: 'filters.holdout.id',
      })
    })
  })
})
