import { expect } from 'chai'
import type { TestService } from '../../../helpers/service.ts'
import { postFlags, startDecideService } from './fixtures.ts'

type Json = Record<string, any>

const corp = {
  type: 'OR',
  values: [{ type: 'AND', values: [{ key: 'email', type: 'person', value: '@corp', operator: 'icontains' }] }],
}

describe('decide admin API: cohorts and static membership', () => {
  let t: TestService
  before(async () => {
    t = await startDecideService()
  })
  after(() => t.close())

  const base = () => `/api/projects/${t.project.id}/cohorts/`
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await t.admin(method, path, body)
    return { status: response.status, body: (response.status === 204 ? null : await response.json()) as Json }
  }
  const flagFor = async (cohortId: number, key: string) =>
    call('POST', `/api/projects/${t.project.id}/feature_flags/`, {
      key,
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohortId }], rollout_percentage: 100 }] },
    })
  const value = async (key: string, distinctId: string, personProperties: Json = {}) =>
    (
      (await (
        await postFlags(t, '/flags/?v=2', {
          token: t.project.api_token,
          distinct_id: distinctId,
          person_properties: personProperties,
        })
      ).json()) as Json
    ).flags[key]

  it('creates a dynamic cohort that flags match on person properties', async () => {
    const created = await call('POST', base(), { name: 'Corp', filters: { properties: corp } })
    expect(created.status).to.equal(201)
    expect(created.body).to.deep.include({ name: 'Corp', is_static: false, filters: { properties: corp }, count: null })
    await flagFor(created.body.id, 'corp-only')
    expect((await value('corp-only', 'a', { email: 'x@corp' })).enabled).to.equal(true)
    expect((await value('corp-only', 'a', { email: 'x@home' })).enabled).to.equal(false)
  })

  it('creates a static cohort with members by distinct id, adds and removes members', async () => {
    const created = await call('POST', base(), { name: 'VIPs', is_static: true, distinct_ids: ['vip-1', 'vip-2'] })
    expect(created.body).to.include({ is_static: true, count: 2 })
    const id = created.body.id
    const members = `${base()}${id}/members/`
    expect((await call('POST', members, { distinct_ids: ['vip-2', 'vip-3'] })).body).to.deep.equal({ added: 1 })
    expect((await call('GET', members)).body).to.deep.equal({ results: ['vip-1', 'vip-2', 'vip-3'], next: null })
    expect((await call('GET', `${members}?limit=2`)).body.next).to.be.a('string')
    expect((await call('DELETE', members, { distinct_ids: ['vip-1'] })).body).to.deep.equal({ removed: 1 })
    expect((await call('GET', `${base()}${id}/`)).body.count).to.equal(2)
  })

  it('matches a static cohort only for stored persons who are members', async () => {
    const id = (await call('GET', base())).body.results.find((c: Json) => c.name === 'VIPs').id
    await flagFor(id, 'vip-only')
    const batch = {
      api_key: t.project.api_token,
      batch: ['vip-2', 'pleb'].map((distinct_id) => ({ event: 'seen', distinct_id, properties: {} })),
    }
    expect(
      (
        await fetch(`${t.url}/batch/`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(batch),
        })
      ).status,
    ).to.equal(200)
    expect((await value('vip-only', 'vip-2')).enabled).to.equal(true)
    expect((await value('vip-only', 'pleb')).enabled).to.equal(false)
    expect(
      (await value('vip-only', 'vip-3')).enabled,
      'a member without a person is not matched, as in PostHog',
    ).to.equal(false)
  })

  it('patches filters of dynamic cohorts only, and fails flags targeting a deleted cohort', async () => {
    const id = (await call('GET', base())).body.results.find((c: Json) => c.name === 'Corp').id
    const patched = await call('PATCH', `${base()}${id}/`, { name: 'Corporate' })
    expect(patched.body).to.include({ name: 'Corporate', version: 1 })
    const vips = (await call('GET', base())).body.results.find((c: Json) => c.name === 'VIPs').id
    expect((await call('PATCH', `${base()}${vips}/`, { filters: { properties: corp } })).status).to.equal(400)
    expect(
      (await call('PATCH', `${base()}${id}/`, { filters: { properties: { type: 'NAND', values: [] } } })).body,
    ).to.include({ attr: 'filters.properties.type' })
    expect((await call('DELETE', `${base()}${id}/`)).status).to.equal(204)
    const failed = await value('corp-only', 'a', { email: 'x@corp' })
    expect(failed).to.include({ enabled: false, failed: true })
    expect(failed.reason.code).to.equal('dependency_not_found_cohort')
  })

  it('refuses members for a dynamic cohort and bad bodies', async () => {
    const dynamic = (await call('POST', base(), { name: 'D', filters: { properties: corp } })).body.id
    expect((await call('POST', `${base()}${dynamic}/members/`, { distinct_ids: ['a'] })).status).to.equal(400)
    expect((await call('POST', base(), { name: 'no filters' })).body).to.include({ attr: 'filters.properties' })
    expect((await call('POST', base(), { name: 'S', is_static: true })).status).to.equal(201)
    expect((await call('GET', `${base()}777/`)).status).to.equal(404)
  })

  it('refuses a dynamic cohort with more look-around regexes than fit in the request budget', async () => {
    const leaves = (count: number) =>
      Array.from({ length: count }, (_, i) => ({
        key: 'email',
        type: 'person',
        operator: 'regex',
        value: `(?<=@)corp${i}`,
      }))
    const refused = await call('POST', base(), {
      name: 'Costly',
      filters: { properties: { type: 'OR', values: [{ type: 'OR', values: leaves(11) }] } },
    })
    expect(refused.status).to.equal(400)
    expect(refused.body).to.include({
      code: 'too_many_backtracking_regexes',
      attr: 'filters.properties.values.0.values.10.value',
    })
    const created = await call('POST', base(), {
      name: 'Costly',
      filters: { properties: { type: 'OR', values: [{ type: 'OR', values: leaves(10) }] } },
    })
    expect(created.status).to.equal(201)
    const patched = await call('PATCH', `${base()}${created.body.id}/`, {
      filters: { properties: { type: 'AND', values: [{ type: 'AND', values: leaves(20) }] } },
    })
    expect(patched.body).to.include({ attr: 'filters.properties.values.0.values.10.value' })
  })
})
