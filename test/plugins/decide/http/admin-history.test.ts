/**
 * Flag and cohort history through real HTTP: every change recorded with its difference, versions
 * and If-Match refusing the second of two conflicting edits, restore from the audit log.
 */
import { expect } from 'chai'
import type { TestService } from '../../../helpers/service.ts'
import { postFlags, putDefinitions, startDecideService } from './fixtures.ts'

type Json = Record<string, any>

describe('decide admin API: flag history, versions and restore', () => {
  let t: TestService
  before(async () => {
    t = await startDecideService()
  })
  after(() => t.close())

  const flagsPath = () => `/api/projects/${t.project.id}/feature_flags/`
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(t.url + path, {
      method,
      headers: { Authorization: `Bearer ${t.adminKey}`, 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return {
      status: response.status,
      etag: response.headers.get('ETag'),
      body: (response.status === 204 ? null : await response.json()) as Json,
    }
  }
  const history = async (type: string, id: number | string) =>
    (await call('GET', `/api/projects/${t.project.id}/audit?entity_type=${type}&entity_id=${id}`)).body
      .results as Json[]
  const enabledFor = async (key: string, distinctId = 'someone') =>
    (
      (await (
        await postFlags(t, '/flags/?v=2', { token: t.project.api_token, distinct_id: distinctId })
      ).json()) as Json
    ).flags[key]?.enabled

  it('records creation, update and deletion of a flag with the key label and the difference', async () => {
    const created = await call('POST', flagsPath(), { key: 'audited', name: 'Audited' })
    expect(created.etag).to.equal('"0"')
    const id = created.body.id
    const patched = await call('PATCH', `${flagsPath()}${id}/`, {
      version: 0,
      filters: { groups: [{ properties: [], rollout_percentage: 30 }] },
    })
    expect(patched.body.version).to.equal(1)
    expect(patched.etag).to.equal('"1"')
    expect((await call('DELETE', `${flagsPath()}${id}/`)).status).to.equal(204)
    const records = await history('feature_flag', id)
    expect(records.map((r) => [r.action, r.version, r.actor.key_label])).to.deep.equal([
      ['deleted', 2, 'admin'],
      ['updated', 1, 'admin'],
      ['created', 0, 'admin'],
    ])
    // the new filters name no variant: the stored null is reported as removed
    expect(records[1].changes).to.deep.equal([
      { path: 'filters.groups.0.rollout_percentage', before: 0, after: 30 },
      { path: 'filters.groups.0.variant', before: null },
    ])
    expect(records[0].changes).to.deep.equal([{ path: 'deleted', before: false, after: true }])
    expect(records[2].before).to.equal(null)
    expect(records[2].after).to.include({ key: 'audited', name: 'Audited', version: 0 })
  })

  it('refuses the second of two concurrent edits made against the same version: exactly one wins', async () => {
    const id = (await call('POST', flagsPath(), { key: 'contended' })).body.id
    for (let round = 0; round < 5; round++) {
      const version = (await call('GET', `${flagsPath()}${id}/`)).body.version
      const edits = await Promise.all(
        ['first', 'second', 'third'].map((name) =>
          call('PATCH', `${flagsPath()}${id}/`, { name: `${name} ${round}`, version }),
        ),
      )
      const statuses = edits.map((edit) => edit.status).sort()
      expect(statuses, `round ${round}`).to.deep.equal([200, 409, 409])
      const refused = edits.find((edit) => edit.status === 409) as { body: Json }
      expect(refused.body).to.include({ type: 'validation_error', code: 'stale_version', attr: 'version' })
      expect(refused.body.detail).to.include(`is at version ${version + 1}, not ${version}`)
      const winner = edits.find((edit) => edit.status === 200) as { body: Json }
      expect((await call('GET', `${flagsPath()}${id}/`)).body).to.include({
        name: winner.body.name,
        version: version + 1,
      })
    }
    // one record per accepted change, none for the refused ones
    expect((await history('feature_flag', id)).map((r) => r.version)).to.deep.equal([5, 4, 3, 2, 1, 0])
  })

  it('takes the version from If-Match as well (the ETag of the GET), and an edit without any version as PostHog does', async () => {
    const id = (await call('POST', flagsPath(), { key: 'if-match' })).body.id
    const read = await call('GET', `${flagsPath()}${id}/`)
    const ok = await call('PATCH', `${flagsPath()}${id}/`, { name: 'one' }, { 'If-Match': read.etag as string })
    expect(ok.status).to.equal(200)
    const stale = await call('PATCH', `${flagsPath()}${id}/`, { name: 'two' }, { 'If-Match': read.etag as string })
    expect(stale.status).to.equal(409)
    expect((await call('DELETE', `${flagsPath()}${id}/`, undefined, { 'If-Match': '"0"' })).status).to.equal(409)
    expect((await call('PATCH', `${flagsPath()}${id}/`, { name: 'x' }, { 'If-Match': 'three' })).body).to.include({
      code: 'invalid_input',
      attr: 'If-Match',
    })
    expect(
      (await call('PATCH', `${flagsPath()}${id}/`, { name: 'x', version: 0 }, { 'If-Match': '"1"' })).body,
    ).to.include({
      attr: 'version',
    })
    const unconditional = await call('PATCH', `${flagsPath()}${id}/`, { name: 'last write' })
    expect(unconditional.body).to.include({ name: 'last write', version: 2 })
  })

  it('restores an earlier version from the audit log, as a change of its own, and serves it at once', async () => {
    const id = (
      await call('POST', flagsPath(), {
        key: 'restorable',
        filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
      })
    ).body.id
    expect(await enabledFor('restorable')).to.equal(true)
    await call('PATCH', `${flagsPath()}${id}/`, {
      version: 0,
      name: 'renamed',
      filters: {
        groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact' }], rollout_percentage: 100 }],
      },
    })
    expect(await enabledFor('restorable')).to.equal(false)
    const restored = await call('POST', `${flagsPath()}${id}/restore/`, { to_version: 0, version: 1 })
    expect(restored.status).to.equal(200)
    expect(restored.body).to.include({ version: 2, name: '' })
    expect(restored.body.filters).to.deep.equal({
      groups: [{ properties: [], rollout_percentage: 100 }],
    })
    expect(await enabledFor('restorable')).to.equal(true)
    const [record] = await history('feature_flag', id)
    expect(record).to.deep.include({ action: 'restored', version: 2, details: { restored_version: 0 } })
    expect(record.changes.map((c: Json) => c.path)).to.include.members(['name', 'filters.groups.0.properties.0'])
    // the restore is itself a version, with its own conditions
    expect((await call('POST', `${flagsPath()}${id}/restore/`, { to_version: 1, version: 1 })).status).to.equal(409)
    expect((await call('POST', `${flagsPath()}${id}/restore/`, { to_version: 9 })).body).to.include({
      code: 'not_found',
      attr: 'to_version',
    })
    expect((await call('POST', `${flagsPath()}${id}/restore/`, { to_version: -1 })).body).to.include({
      attr: 'to_version',
    })
    expect((await call('POST', `${flagsPath()}${id}/restore/`, {})).body).to.include({ attr: 'to_version' })
  })

  it('refuses a restore that would take a key another live flag now has', async () => {
    const id = (await call('POST', flagsPath(), { key: 'original-key' })).body.id
    await call('PATCH', `${flagsPath()}${id}/`, { key: 'moved-key' })
    await call('POST', flagsPath(), { key: 'original-key' })
    const refused = await call('POST', `${flagsPath()}${id}/restore/`, { to_version: 0 })
    expect(refused.status).to.equal(400)
    expect(refused.body).to.include({ code: 'unique', attr: 'key' })
  })

  it('records cohort changes and static membership, with versions and If-Match', async () => {
    const base = `/api/projects/${t.project.id}/cohorts/`
    const cohort = await call('POST', base, {
      name: 'Pros',
      filters: { properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] } },
    })
    const id = cohort.body.id
    expect((await call('PATCH', `${base}${id}/`, { name: 'Pro users', version: 0 })).status).to.equal(200)
    expect((await call('PATCH', `${base}${id}/`, { name: 'Late', version: 0 })).status).to.equal(409)
    expect((await call('DELETE', `${base}${id}/`, undefined, { 'If-Match': '"0"' })).status).to.equal(409)
    expect((await call('GET', `${base}${id}/`)).etag).to.equal('"1"')
    const statics = await call('POST', base, { name: 'Beta', is_static: true, distinct_ids: ['a'] })
    await call('POST', `${base}${statics.body.id}/members/`, { distinct_ids: ['b', 'c'] })
    expect((await history('cohort', id)).map((r) => [r.action, r.version])).to.deep.equal([
      ['updated', 1],
      ['created', 0],
    ])
    const [members] = await history('cohort', statics.body.id)
    expect(members).to.deep.include({
      action: 'members_added',
      details: { count: 2, distinct_ids: ['b', 'c'], listed_all: true },
    })
  })

  it('records a definitions import with the flags and cohorts it added, removed and changed', async () => {
    const imported = await putDefinitions(t, {
      flags: [
        { id: 1, key: 'imported-a', active: true, version: 7, filters: { groups: [{ rollout_percentage: 100 }] } },
        { id: 2, key: 'imported-b', active: true, filters: { groups: [{ rollout_percentage: 50 }] } },
      ],
      group_type_mapping: {},
      cohorts: {},
    })
    expect(imported.status).to.equal(200)
    const path = `/api/projects/${t.project.id}/audit?entity_type=flag_definitions`
    const [latest] = (await call('GET', path)).body.results as Json[]
    expect(latest).to.deep.include({ action: 'imported', entity_id: null, details: { flags: 2, cohorts: 0 } })
    expect(Object.keys(latest.after.flags)).to.have.members(['imported-a', 'imported-b'])
    expect(latest.changes.map((c: Json) => c.path)).to.include.members(['flags.imported-a', 'flags.restorable'])
  })

  it("starts each imported flag's history afresh: its own versions restore, the id's earlier flag's do not", async () => {
    // before the import, id 1 was the flag "audited" (versions 0 to 2)
    const [record] = await history('feature_flag', 1)
    expect(record).to.deep.include({ action: 'imported', version: 7 })
    expect([record.before.key, record.after.key]).to.deep.equal(['audited', 'imported-a'])
    const removed = (await history('feature_flag', 3))[0]
    expect(removed).to.deep.include({ action: 'imported', after: null, version: null })
    await call('PATCH', `${flagsPath()}1/`, { name: 'renamed after import', version: 7 })
    expect((await call('POST', `${flagsPath()}1/restore/`, { to_version: 1 })).body).to.include({ attr: 'to_version' })
    const restored = await call('POST', `${flagsPath()}1/restore/`, { to_version: 7, version: 8 })
    expect(restored.body).to.include({ key: 'imported-a', name: '', version: 9 })
  })
})
