import { expect } from 'chai'
import type { TestService } from '../../../helpers/service.ts'
import { postFlags, startDecideService } from './fixtures.ts'

type Json = Record<string, any>

describe('decide admin API: feature flags (PostHog REST shape)', () => {
  let t: TestService
  before(async () => {
    t = await startDecideService()
  })
  after(() => t.close())

  const base = () => `/api/projects/${t.project.id}/feature_flags/`
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await t.admin(method, path, body)
    return { status: response.status, body: (response.status === 204 ? null : await response.json()) as Json }
  }
  const evaluated = async (distinctId = 'u') =>
    (
      (await (
        await postFlags(t, '/flags/?v=2', { token: t.project.api_token, distinct_id: distinctId })
      ).json()) as Json
    ).flags

  it('creates a flag, off by default, that flags requests see at once', async () => {
    const created = await call('POST', base(), { key: 'new-flag', name: 'A new flag' })
    expect(created.status).to.equal(201)
    expect(created.body).to.deep.include({
      key: 'new-flag',
      name: 'A new flag',
      active: true,
      deleted: false,
      version: 0,
      team_id: t.project.id,
      is_simple_flag: true,
      rollout_percentage: 0,
    })
    expect((await evaluated())['new-flag']).to.include({ enabled: false })
  })

  it('lists, reads, and patches a flag, bumping its version; the change is served at once', async () => {
    const list = await call('GET', base())
    expect(list.body).to.include({ count: 1, next: null, previous: null })
    const id = list.body.results[0].id
    expect((await call('GET', `${base()}${id}/`)).body.key).to.equal('new-flag')
    const patched = await call('PATCH', `${base()}${id}/`, {
      filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"on":1}' } },
    })
    expect(patched.body).to.include({ version: 1, rollout_percentage: 100 })
    expect((await evaluated())['new-flag']).to.deep.include({
      enabled: true,
      metadata: { id, version: 1, description: null, payload: '{"on":1}', has_experiment: false },
    })
    expect((await call('PATCH', `${base()}${id}`, { active: false })).body).to.include({ active: false, version: 2 })
    expect(await evaluated()).to.not.have.property('new-flag')
  })

  it('refuses a stale version with 409, a duplicate key and an invalid key with 400', async () => {
    const id = (await call('POST', base(), { key: 'second', filters: { groups: [] } })).body.id
    expect((await call('PATCH', `${base()}${id}/`, { version: 5, name: 'x' })).status).to.equal(409)
    expect((await call('PATCH', `${base()}${id}/`, { version: 0, name: 'x' })).body).to.include({
      name: 'x',
      version: 1,
    })
    const duplicate = await call('POST', base(), { key: 'second' })
    expect(duplicate.status).to.equal(400)
    expect(duplicate.body).to.include({ attr: 'key' })
    expect((await call('PATCH', `${base()}${id}/`, { key: 'new-flag' })).status).to.equal(400)
    expect((await call('POST', base(), { key: 'has space' })).body).to.include({ attr: 'key' })
    expect(
      (await call('POST', base(), { key: 'k', filters: { groups: [{ rollout_percentage: -1 }] } })).body,
    ).to.include({ attr: 'filters.groups.0.rollout_percentage' })
  })

  it('deletes by marking deleted: gone from the list and from flags, its key free again', async () => {
    const id = (
      await call('POST', base(), { key: 'doomed', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
    ).body.id
    expect(await evaluated()).to.have.property('doomed')
    expect((await call('DELETE', `${base()}${id}/`)).status).to.equal(204)
    expect(await evaluated()).to.not.have.property('doomed')
    expect((await call('GET', base())).body.results.map((f: Json) => f.key)).to.not.include('doomed')
    expect((await call('GET', `${base()}${id}/`)).body).to.include({ deleted: true })
    expect((await call('POST', base(), { key: 'doomed' })).status).to.equal(201)
  })

  it('refuses more look-around regexes than fit in the request budget (10 at the default 100 ms), on create and on change', async () => {
    const sets = (count: number, pattern = (i: number) => `(?<=@)corp${i}`) =>
      Array.from({ length: count }, (_, i) => ({
        properties: [{ key: 'email', type: 'person', operator: 'regex', value: pattern(i) }],
        rollout_percentage: 100,
      }))
    const refused = await call('POST', base(), { key: 'costly', filters: { groups: sets(11) } })
    expect(refused.status).to.equal(400)
    expect(refused.body).to.include({
      code: 'too_many_backtracking_regexes',
      attr: 'filters.groups.10.properties.0.value',
    })
    expect(refused.body.detail).to.include('flag "costly", condition set 11, property "email"')
    const created = await call('POST', base(), { key: 'costly', filters: { groups: sets(10) } })
    expect(created.status).to.equal(201)
    expect((await call('PATCH', `${base()}${created.body.id}/`, { filters: { groups: sets(12) } })).body).to.include({
      attr: 'filters.groups.10.properties.0.value',
    })
    expect((await call('PATCH', `${base()}${created.body.id}/`, { name: 'renamed' })).status).to.equal(200)
    // linear patterns, however many, and however catastrophic for a backtracking engine
    expect(
      (await call('POST', base(), { key: 'linear', filters: { groups: sets(50, (i) => `^(a+)+${i}$`) } })).status,
    ).to.equal(201)
  })

  it('answers 404 for unknown flags and projects', async () => {
    expect((await call('GET', `${base()}9999/`)).status).to.equal(404)
    expect((await call('GET', `${base()}abc/`)).status).to.equal(404)
    expect((await call('PATCH', `${base()}9999/`, { name: 'x' })).status).to.equal(404)
    expect((await call('GET', '/api/projects/4242/feature_flags/')).status).to.equal(404)
  })

  it('pages the list with limit and offset', async () => {
    const page = await call('GET', `${base()}?limit=1&offset=1`)
    expect(page.body.results).to.have.length(1)
    expect(page.body.previous).to.be.a('string')
    expect(page.body.next).to.be.a('string')
  })

  it('lists the newest flag first, as PostHog does, however many flags were made before it', async () => {
    const keys = ['order-first', 'order-second', 'order-third']
    for (const key of keys) await call('POST', base(), { key })
    const listed = (await call('GET', `${base()}?limit=3`)).body.results.map((flag: Json) => flag.key)
    expect(listed).to.deep.equal([...keys].reverse())
    const all = (await call('GET', `${base()}?limit=1000`)).body.results as Json[]
    const created = all.map((flag) => Date.parse(flag.created_at))
    expect(created).to.deep.equal([...created].sort((a, b) => b - a))
  })

  it('finds flags by a text in their key or name, in any case, before paging', async () => {
    await call('POST', base(), { key: 'checkout-redesign', name: 'New Checkout' })
    await call('POST', base(), { key: 'dark-mode', name: 'Night theme for CHECKOUT pages' })
    const found = await call('GET', `${base()}?search=CheckOut&limit=1`)
    expect(found.body.count).to.equal(2)
    expect(found.body.results.map((flag: Json) => flag.key)).to.deep.equal(['dark-mode'])
    expect(found.body.next).to.contain('search=CheckOut')
    const next = await call('GET', new URL(found.body.next).pathname + new URL(found.body.next).search)
    expect(next.body.results.map((flag: Json) => flag.key)).to.deep.equal(['checkout-redesign'])
    expect((await call('GET', `${base()}?search=nothing-like-this`)).body).to.include({ count: 0 })
  })
})
