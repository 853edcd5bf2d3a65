import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { testDbName } from '../../helpers/mongo.ts'

type Json = Record<string, any>

const ALICE_KEY = 'alice-admin-key-0123456789'
const PLUGINS = [{ plugin: 'validate' }, { plugin: 'decide' }, { plugin: 'sink-mongo', required: true }]

describe('admin API: the audit log', () => {
  let t: TestService
  const database = testDbName('audit')
  before(async () => {
    t = await startTestService({
      plugins: PLUGINS,
      storage: { database },
      admin: { keys: [{ label: 'alice', key: ALICE_KEY }] },
    })
  })
  after(() => t.close())

  const audit = async (query = '', key = t.adminKey) => {
    const response = await fetch(`${t.url}/api/projects/${t.project.id}/audit${query}`, {
      headers: { Authorization: `Bearer ${key}` },
    })
    return { status: response.status, body: (await response.json()) as Json }
  }
  const asAlice = (method: string, path: string, body?: unknown) =>
    fetch(t.url + path, {
      method,
      headers: { Authorization: `Bearer ${ALICE_KEY}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })

  it('records a project creation with the label of the key that made it, without the secret key', async () => {
    const { body } = await audit()
    expect(body.results).to.have.length(1)
    const [created] = body.results
    expect(created).to.deep.include({
      project_id: t.project.id,
      entity_type: 'project',
      entity_id: String(t.project.id),
      action: 'created',
      actor: { key_label: 'admin' },
      before: null,
    })
    expect(created.after).to.include({ name: 'test project', api_token: t.project.api_token })
    expect(JSON.stringify(created)).to.not.include(t.project.secret_api_token)
    expect(created.changes).to.deep.include({ path: 'name', after: 'test project' })
    expect(Date.parse(created.created_at)).to.be.closeTo(Date.now(), 60_000)
    expect(
      (await (await t.admin('GET', `/api/projects/${t.project.id}/audit/${created.id}`)).json()) as Json,
    ).to.deep.equal(created)
  })

  it('admits every labelled key and names it in the records of its changes', async () => {
    expect(await (await asAlice('GET', '/api/me')).json()).to.deep.equal({ key_label: 'alice' })
    expect(await (await t.admin('GET', '/api/me')).json()).to.deep.equal({ key_label: 'admin' })
    const created = await asAlice('POST', '/api/projects', { name: 'alice project' })
    expect(created.status).to.equal(201)
    const project = (await created.json()) as Json
    const response = await asAlice('GET', `/api/projects/${project.id}/audit`)
    const { results } = (await response.json()) as Json
    expect(results.map((r: Json) => [r.entity_type, r.actor.key_label])).to.deep.equal([['project', 'alice']])
  })

  it('pages newest first by cursor without gaps or repeats, filtered by entity', async () => {
    const base = `/api/projects/${t.project.id}/feature_flags/`
    for (let i = 0; i < 5; i++) expect((await t.admin('POST', base, { key: `paged-${i}` })).status).to.equal(201)
    const seen: Json[] = []
    let query = '?entity_type=feature_flag&limit=2'
    for (let pages = 0; pages < 10; pages++) {
      const { status, body } = await audit(query)
      expect(status).to.equal(200)
      seen.push(...body.results)
      if (!body.next) break
      query = new URL(body.next).search
    }
    expect(seen.map((r) => r.after.key)).to.deep.equal(['paged-4', 'paged-3', 'paged-2', 'paged-1', 'paged-0'])
    const one = await audit(`?entity_type=feature_flag&entity_id=${seen[2].entity_id}`)
    expect(one.body.results.map((r: Json) => r.after.key)).to.deep.equal(['paged-2'])
  })

  it('answers bad filters with 400 naming the field, an unknown record with 404, and offers no way to edit a record', async () => {
    expect((await audit('/?limit=1')).body.results).to.have.length(1)
    expect((await audit('?limit=0')).body).to.include({ code: 'invalid_input', attr: 'limit' })
    expect((await audit('?cursor=nonsense')).body).to.include({ attr: 'cursor' })
    expect((await audit('?entity_id=3')).body).to.include({ attr: 'entity_type' })
    expect((await audit('?colour=red')).body).to.include({ attr: 'colour' })
    const id = (await audit()).body.results[0].id
    const path = `/api/projects/${t.project.id}/audit/${id}`
    for (const method of ['PATCH', 'PUT', 'DELETE', 'POST'])
      expect((await t.admin(method, path, {})).status, method).to.be.oneOf([404, 405])
    expect((await t.admin('GET', `/api/projects/${t.project.id}/audit/000000000000000000000000`)).status).to.equal(404)
    expect((await t.admin('GET', `/api/projects/${t.project.id}/audit/not-an-id`)).status).to.equal(404)
  })

  it('keeps its records across a restart', async () => {
    const before = (await audit('?limit=500')).body.results
    await t.service.close()
    t = await startTestService({
      plugins: PLUGINS,
      storage: { database },
      admin: { keys: [{ label: 'alice', key: ALICE_KEY }] },
    })
    // the restarted service created one more test project; the first one's log is unchanged
    const response = await fetch(`${t.url}/api/projects/${before[0].project_id}/audit?limit=500`, {
      headers: { Authorization: `Bearer ${t.adminKey}` },
    })
    expect(((await response.json()) as Json).results).to.deep.equal(before)
  })
})
