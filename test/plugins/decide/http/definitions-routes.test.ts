import { expect } from 'chai'
import type { TestService } from '../../../helpers/service.ts'
import { putDefinitions, startDecideService } from './fixtures.ts'

type Json = Record<string, any>

const DEFINITIONS = {
  flags: [
    {
      id: 11,
      key: 'base',
      active: true,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"remote":"config"}' } },
    },
    {
      id: 12,
      key: 'child',
      active: true,
      filters: {
        groups: [
          {
            properties: [{ key: '11', type: 'flag', value: true, operator: 'flag_evaluates_to' }],
            rollout_percentage: 100,
          },
        ],
      },
    },
    {
      id: 13,
      key: 'in-cohort',
      active: false,
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 20 }] }] },
    },
  ],
  group_type_mapping: { 0: 'company' },
  cohorts: {
    20: {
      type: 'OR',
      values: [{ type: 'AND', values: [{ key: 'email', type: 'person', value: 'corp', operator: 'icontains' }] }],
    },
  },
}

describe('decide local-evaluation definitions and remote config payloads', () => {
  let t: TestService
  let other: { api_token: string; secret_api_token: string }
  before(async () => {
    t = await startDecideService()
    expect((await putDefinitions(t, DEFINITIONS)).status).to.equal(200)
    other = (await (await t.admin('POST', '/api/projects', { name: 'other' })).json()) as typeof other
  })
  after(() => t.close())

  const get = (path: string, key?: string, headers: Record<string, string> = {}) =>
    fetch(t.url + path, { headers: { ...(key && { Authorization: `Bearer ${key}` }), ...headers } })
  const definitionsPath = () => `/flags/definitions?token=${t.project.api_token}&send_cohorts`

  it('serves the SDK format to the project secret key and to the admin key, with dependencies by key', async () => {
    for (const key of [t.project.secret_api_token, t.adminKey]) {
      const response = await get(definitionsPath(), key)
      expect(response.status).to.equal(200)
      expect(response.headers.get('cache-control')).to.equal('private, must-revalidate')
      const body = (await response.json()) as Json
      expect(body.flags.map((f: Json) => f.key)).to.deep.equal(['base', 'child', 'in-cohort'])
      expect(body.flags[1].filters.groups[0].properties[0]).to.deep.include({ key: 'base', dependency_chain: ['base'] })
      expect(body.group_type_mapping).to.deep.equal({ 0: 'company' })
      expect(Object.keys(body.cohorts)).to.deep.equal(['20'])
    }
  })

  it('answers the older /api/feature_flag/local_evaluation path the same way', async () => {
    const current = await (await get(definitionsPath(), t.project.secret_api_token)).text()
    for (const key of [t.project.secret_api_token, t.adminKey]) {
      const response = await get(`/api/feature_flag/local_evaluation?token=${t.project.api_token}&send_cohorts`, key)
      expect(response.status).to.equal(200)
      expect(await response.text()).to.equal(current)
    }
  })

  it('answers 304 to a matching If-None-Match, and 200 with a new ETag once the definitions change', async () => {
    const first = await get(definitionsPath(), t.project.secret_api_token)
    const etag = first.headers.get('etag') as string
    expect(etag).to.match(/^W\/"[0-9a-f]{40}"$/)
    const again = await get(definitionsPath(), t.project.secret_api_token, { 'If-None-Match': etag })
    expect(again.status).to.equal(304)
    expect(again.headers.get('etag')).to.equal(etag)
    const patched = await t.admin('PATCH', `/api/projects/${t.project.id}/feature_flags/13/`, { active: true })
    expect(patched.status).to.equal(200)
    const changed = await get(definitionsPath(), t.project.secret_api_token, { 'If-None-Match': etag })
    expect(changed.status).to.equal(200)
    expect(changed.headers.get('etag')).to.not.equal(etag)
  })

  it('refuses missing credentials, another project’s secret key and an unknown token', async () => {
    expect((await get(definitionsPath())).status).to.equal(401)
    expect(((await (await get(definitionsPath())).json()) as Json).code).to.equal('not_authenticated')
    expect((await get(definitionsPath(), other.secret_api_token)).status).to.equal(401)
    expect((await get(definitionsPath(), t.project.api_token)).status).to.equal(401)
    expect((await get('/flags/definitions?token=phc_nobody', t.adminKey)).status).to.equal(401)
    expect(
      (await get(`/api/feature_flag/local_evaluation?token=${t.project.api_token}`, other.secret_api_token)).status,
    ).to.equal(401)
    expect(
      (await get(`/api/feature_flag/local_evaluation?token=${t.project.api_token}`, t.project.api_token)).status,
    ).to.equal(401)
  })

  it('serves a flag’s payload as posthog-node’s getRemoteConfigPayload asks for it', async () => {
    const path = (key: string) =>
      `/api/projects/@current/feature_flags/${key}/remote_config?token=${t.project.api_token}`
    const response = await get(path('base'), t.project.secret_api_token)
    expect(response.status).to.equal(200)
    expect(await response.json()).to.equal('{"remote":"config"}')
    expect(await (await get(path('child'), t.adminKey)).json()).to.equal(null)
    expect((await get(path('missing'), t.project.secret_api_token)).status).to.equal(404)
    expect((await get(path('base'), other.secret_api_token)).status).to.equal(401)
  })
})
