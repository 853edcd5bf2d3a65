import { expect } from 'chai'
import type { TestService } from '../../../helpers/service.ts'
import { postFlags, putDefinitions, startDecideService } from './fixtures.ts'

type Json = Record<string, any>

/** PostHog's /flags/definitions output: dependencies by key with chains, dynamic cohorts as property groups. */
const POSTHOG_EXPORT = {
  flags: [
    {
      id: 101,
      team_id: 9,
      key: 'parent',
      name: 'P',
      active: true,
      deleted: false,
      ensure_experience_continuity: false,
      version: 4,
      filters: {
        groups: [{ properties: [{ key: 'id', type: 'cohort', value: 7 }], rollout_percentage: 100 }],
        payloads: { true: '"hello"' },
      },
    },
    {
      id: 102,
      team_id: 9,
      key: 'child',
      name: 'C',
      active: true,
      deleted: false,
      ensure_experience_continuity: false,
      version: 1,
      filters: {
        groups: [
          {
            properties: [
              { key: 'parent', type: 'flag', value: true, operator: 'flag_evaluates_to', dependency_chain: ['parent'] },
            ],
            rollout_percentage: 100,
          },
        ],
      },
    },
    {
      id: 103,
      team_id: 9,
      key: 'company-flag',
      name: '',
      active: true,
      deleted: false,
      ensure_experience_continuity: false,
      version: 1,
      filters: { aggregation_group_type_index: 1, groups: [{ properties: [], rollout_percentage: 100 }] },
    },
  ],
  group_type_mapping: { 0: 'project', 1: 'company' },
  cohorts: {
    7: {
      type: 'OR',
      values: [{ type: 'AND', values: [{ key: 'email', type: 'person', value: '@corp', operator: 'icontains' }] }],
    },
    8: { name: 'VIPs', is_static: true },
  },
  quotaLimited: [],
}

describe('decide admin API: flag definitions', () => {
  let t: TestService
  before(async () => {
    t = await startDecideService()
  })
  after(() => t.close())

  const path = () => `/api/projects/${t.project.id}/flag_definitions`
  const exported = async () => (await (await t.admin('GET', path())).json()) as Json
  const values = async (distinctId: string, personProperties: Json = {}, groups: Json = {}) =>
    (
      (await (
        await postFlags(t, '/flags', {
          token: t.project.api_token,
          distinct_id: distinctId,
          person_properties: personProperties,
          groups,
        })
      ).json()) as Json
    ).featureFlags

  it('imports PostHog’s export, keeping ids so dependencies work, and serves flags from it at once', async () => {
    const response = await putDefinitions(t, POSTHOG_EXPORT)
    expect(response.status).to.equal(200)
    expect(await values('u', { email: 'a@corp' }, { company: 'acme' })).to.deep.equal({
      parent: true,
      child: true,
      'company-flag': true,
    })
    expect(await values('u', { email: 'a@home' })).to.deep.equal({ parent: false, child: false, 'company-flag': false })
  })

  it('exports what it imported, in the same format, so GET then PUT round-trips', async () => {
    const first = await exported()
    expect(first.flags.map((f: Json) => [f.id, f.key, f.version])).to.deep.equal([
      [101, 'parent', 4],
      [102, 'child', 1],
      [103, 'company-flag', 1],
    ])
    expect(first.flags[1].filters.groups[0].properties[0]).to.deep.include({
      key: 'parent',
      dependency_chain: ['parent'],
    })
    expect(first.group_type_mapping).to.deep.equal({ 0: 'project', 1: 'company' })
    expect(first.cohorts).to.deep.equal({
      7: POSTHOG_EXPORT.cohorts[7],
      8: { name: 'VIPs', description: '', is_static: true },
    })
    expect((await putDefinitions(t, first)).status).to.equal(200)
    expect(await exported()).to.deep.equal(first)
  })

  it('answers 400 naming the offending path and changes nothing', async () => {
    const before = await exported()
    const broken = structuredClone(POSTHOG_EXPORT) as Json
    broken.flags[2].filters.groups[0].rollout_percentage = 'all'
    const response = await putDefinitions(t, broken)
    expect(response.status).to.equal(400)
    expect(await response.json()).to.include({
      type: 'validation_error',
      attr: 'flags.2.filters.groups.0.rollout_percentage',
    })
    expect(await exported()).to.deep.equal(before)
    const badJson = await fetch(t.url + path(), {
      method: 'PUT',
      headers: { Authorization: `Bearer ${t.adminKey}` },
      body: '{"flags": [',
    })
    expect(badJson.status).to.equal(400)
  })

  it('needs the admin key: a project secret key is refused here', async () => {
    const response = await fetch(t.url + path(), {
      method: 'PUT',
      headers: { Authorization: `Bearer ${t.project.secret_api_token}` },
      body: JSON.stringify(POSTHOG_EXPORT),
    })
    expect(response.status).to.equal(401)
    expect((await t.admin('GET', '/api/projects/999/flag_definitions')).status).to.equal(404)
  })

  it('replaces everything: flags and cohorts left out of the body are gone', async () => {
    expect((await putDefinitions(t, { flags: [{ id: 1, key: 'only', active: true, filters: {} }] })).status).to.equal(
      200,
    )
    const after = await exported()
    expect(after.flags.map((f: Json) => f.key)).to.deep.equal(['only'])
    expect(after.cohorts).to.deep.equal({})
    expect(after.group_type_mapping, 'group types are never removed').to.deep.equal({ 0: 'project', 1: 'company' })
  })
})
