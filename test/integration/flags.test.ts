/**
 * Flags end to end: events captured through /batch/ write persons and groups (persons,
 * group-update), and the very next /flags call evaluates against them, with the
 * client IP's GeoIP properties and experience continuity across identify.
 */
import { expect } from 'chai'
import { startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { writeMaxMindCityFixture } from '../plugins/geoip/fixtures.ts'
import { hashFor } from '../../plugins/decide/evaluator/index.ts'

type Json = Record<string, any>

const all = (properties: unknown[], rollout = 100) => ({ groups: [{ properties, rollout_percentage: rollout }] })
const CONTINUITY_ROLLOUT = 50
const DEFINITIONS = {
  flags: [
    {
      id: 1,
      key: 'pro-plan',
      active: true,
      filters: all([{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }]),
    },
    {
      id: 2,
      key: 'tech-companies',
      active: true,
      filters: {
        aggregation_group_type_index: 0,
        ...all([{ key: 'industry', value: 'tech', type: 'group', group_type_index: 0 }]),
      },
    },
    {
      id: 3,
      key: 'british',
      active: true,
      filters: all([{ key: '$geoip_country_code', value: 'GB', type: 'person' }]),
    },
    { id: 4, key: 'sticky', active: true, ensure_experience_continuity: true, filters: all([], CONTINUITY_ROLLOUT) },
    { id: 5, key: 'beta-testers', active: true, filters: all([{ key: 'id', value: 9, type: 'cohort' }]) },
  ],
  group_type_mapping: { 0: 'company' },
  cohorts: { 9: { name: 'beta testers', is_static: true } },
}

describe('flags over ingested persons and groups', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'geoip', options: { databasePath: writeMaxMindCityFixture() } },
        { plugin: 'persons' },
        { plugin: 'group-update' },
        { plugin: 'decide' },
        { plugin: 'sink-mongo', required: true },
      ],
    })
    expect((await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, DEFINITIONS)).status).to.equal(200)
  })
  after(() => t.close())

  const capture = async (...events: Json[]) => {
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: t.project.api_token, batch: events }),
    })
    expect(response.status).to.equal(200)
  }
  const flags = async (body: Json, headers: Record<string, string> = {}) => {
    const response = await fetch(`${t.url}/flags/?v=2`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ token: t.project.api_token, ...body }),
    })
    expect(response.status).to.equal(200)
    return ((await response.json()) as Json).flags as Record<string, Json>
  }

  it('sees a $set captured a moment ago on the very next flags call', async () => {
    expect((await flags({ distinct_id: 'ana' }))['pro-plan'].enabled).to.equal(false)
    await capture({ event: '$set', distinct_id: 'ana', properties: { $set: { plan: 'pro' } } })
    expect((await flags({ distinct_id: 'ana' }))['pro-plan'].enabled).to.equal(true)
    // the same once the persons cache serves (its change stream opens within a second) and holds ana
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    for (let i = 0; i < 2; i++) expect((await flags({ distinct_id: 'ana' }))['pro-plan'].enabled).to.equal(true)
    await capture({ event: '$identify', distinct_id: 'ana', properties: { $set: { plan: 'free' } } })
    expect((await flags({ distinct_id: 'ana' }))['pro-plan'].enabled).to.equal(false)
    expect(
      (await flags({ distinct_id: 'ana', person_properties: { plan: 'pro' } }))['pro-plan'].enabled,
      'the request override wins',
    ).to.equal(true)
  })

  it('matches group flags on the properties of a group identified by $groupidentify', async () => {
    await capture({
      event: '$groupidentify',
      distinct_id: 'ana',
      properties: { $group_type: 'company', $group_key: 'acme', $group_set: { industry: 'tech' } },
    })
    expect((await flags({ distinct_id: 'ana', groups: { company: 'acme' } }))['tech-companies'].enabled).to.equal(true)
    // the groups cache serves within a second; a group written meanwhile is read at once all the same
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect((await flags({ distinct_id: 'ana', groups: { company: 'acme' } }))['tech-companies'].enabled).to.equal(true)
    await capture({
      event: '$groupidentify',
      distinct_id: 'ana',
      properties: { $group_type: 'company', $group_key: 'acme', $group_set: { industry: 'retail' } },
    })
    expect((await flags({ distinct_id: 'ana', groups: { company: 'acme' } }))['tech-companies'].enabled).to.equal(false)
    expect((await flags({ distinct_id: 'ana', groups: { company: 'other' } }))['tech-companies'].enabled).to.equal(
      false,
    )
    expect((await flags({ distinct_id: 'ana' }))['tech-companies'].reason.code).to.equal('no_group_type')
  })

  it('computes $geoip_* from X-Forwarded-For over the stored values, unless geoip_disable', async () => {
    await capture({
      event: '$set',
      distinct_id: 'ben',
      properties: { $geoip_disable: true, $set: { $geoip_country_code: 'US' } },
    })
    expect((await flags({ distinct_id: 'ben' })).british.enabled).to.equal(false)
    expect(
      (await flags({ distinct_id: 'ben' }, { 'X-Forwarded-For': '81.2.69.142, 10.0.0.1' })).british.enabled,
    ).to.equal(true)
    expect(
      (await flags({ distinct_id: 'ben', geoip_disable: true }, { 'X-Forwarded-For': '81.2.69.142' })).british.enabled,
    ).to.equal(false)
  })

  it('keeps a visitor’s bucket through identify, as posthog-js sends $anon_distinct_id after it', async () => {
    const inRollout = (id: string) => hashFor('sticky', id) <= CONTINUITY_ROLLOUT / 100
    const anon = 'anon-visitor-1'
    let user = 'signed-up-0'
    for (let i = 1; i < 100 && inRollout(user) === inRollout(anon); i++) user = `signed-up-${i}`
    await capture({ event: '$pageview', distinct_id: anon, properties: {} })
    expect((await flags({ distinct_id: anon })).sticky.enabled).to.equal(inRollout(anon))
    await capture({ event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon } })
    expect((await flags({ distinct_id: user, $anon_distinct_id: anon })).sticky.enabled).to.equal(inRollout(anon))
    expect((await flags({ distinct_id: user })).sticky.enabled, 'on later calls, without the anon id').to.equal(
      inRollout(anon),
    )
  })

  it('matches a static cohort member by any distinct id of the person', async () => {
    expect(
      (await t.admin('POST', `/api/projects/${t.project.id}/cohorts/9/members/`, { distinct_ids: ['early-anon'] }))
        .status,
    ).to.equal(200)
    await capture({ event: '$pageview', distinct_id: 'early-anon', properties: {} })
    expect((await flags({ distinct_id: 'early-anon' }))['beta-testers'].enabled).to.equal(true)
    expect((await flags({ distinct_id: 'cleo' }))['beta-testers'].enabled).to.equal(false)
    await capture({ event: '$identify', distinct_id: 'cleo', properties: { $anon_distinct_id: 'early-anon' } })
    expect((await flags({ distinct_id: 'cleo' }))['beta-testers'].enabled).to.equal(true)
  })
})
