/**
 * An operator replaces the built-in geoip with a third-party package (issue 19): the package in
 * test/fixtures/plugins/hedgerow-plugin-step-geoip-fixed imports only `hedgerow/plugin-api`, is
 * installed in an application's node_modules next to the service, and is named in the config in
 * geoip's place. Its locations reach the stored event, the person (through the person steps), and
 * flags: decide evaluates `$geoip_*` person properties through the `geoip` service it provides.
 */
import { expect } from 'chai'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ROOT_DIR, startTestService, storedEvents } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { specifiers } from '../core/import-graph.ts'

const PACKAGE = 'hedgerow-plugin-step-geoip-fixed'
const FIXTURE = path.join(ROOT_DIR, 'test', 'fixtures', 'plugins', PACKAGE)
/** The one address the package's table knows (a documentation range, so no real database knows it). */
const KNOWN_IP = '203.0.113.9'

const PLUGINS = [
  { plugin: 'validate' },
  { plugin: PACKAGE },
  { plugin: 'persons' },
  { plugin: 'decide' },
  { plugin: 'sink-mongo', required: true },
]

const nzOnly = {
  id: 1,
  key: 'nz-only',
  active: true,
  filters: {
    groups: [
      {
        properties: [{ key: '$geoip_country_code', type: 'person', operator: 'exact', value: 'NZ' }],
        rollout_percentage: 100,
      },
    ],
  },
}

describe('geoip replaced by a third-party package', () => {
  let app: string
  let t: TestService

  before(async () => {
    app = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-geoip-swap-'))
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true }))
    mkdirSync(path.join(app, 'node_modules'))
    cpSync(FIXTURE, path.join(app, 'node_modules', PACKAGE), { recursive: true })
    // the service as the application's dependency, as `npm install hedgerow` places it
    symlinkSync(ROOT_DIR, path.join(app, 'node_modules', 'hedgerow'), 'dir')
    t = await startTestService({ plugins: PLUGINS }, { rootDir: app })
    const put = await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, { flags: [nzOnly] })
    expect(put.status, await put.clone().text()).to.equal(200)
  })
  after(async () => {
    await t?.close()
    rmSync(app, { recursive: true, force: true })
  })

  const capture = async (distinctId: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ api_key: t.project.api_token, batch: [{ event: 'visit', distinct_id: distinctId }] }),
    })
    expect(response.status, await response.clone().text()).to.equal(200)
  }
  const flags = async (distinctId: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${t.url}/flags/?v=2`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ token: t.project.api_token, distinct_id: distinctId }),
    })
    expect(response.status).to.equal(200)
    return ((await response.json()) as { flags: Record<string, { enabled: boolean }> }).flags['nz-only']?.enabled
  }

  it('imports nothing but the published contract', () => {
    const source = readFileSync(path.join(FIXTURE, 'index.js'), 'utf8')
    expect(specifiers(source)).to.deep.equal(['hedgerow/plugin-api'])
  })

  it('is loaded by package name from the application, on the geoip step, with no built-in geoip', () => {
    const loaded = t.service.plugins.find((p) => p.id === PACKAGE)
    expect(loaded?.source).to.equal(`npm ${PACKAGE}@1.0.0`)
    expect(loaded?.tapped).to.deep.equal(['geoip'])
    expect(t.service.plugins.map((p) => p.id)).to.not.include('geoip')
  })

  it("puts its location on the stored event and, through the person steps, on the event's person", async () => {
    await capture('kiwi', { 'X-Forwarded-For': KNOWN_IP })
    const [stored] = await storedEvents(t, '&distinct_id=kiwi')
    expect(stored?.properties).to.include({ $geoip_country_code: 'NZ', $geoip_city_name: 'Hobbiton' })
    expect(stored?.person_properties).to.include({
      $geoip_country_code: 'NZ',
      $geoip_time_zone: 'Pacific/Auckland',
      $initial_geoip_country_code: 'NZ',
    })
  })

  it('leaves an event from an address it does not know as it came', async () => {
    await capture('elsewhere', { 'X-Forwarded-For': '198.51.100.7' })
    const [stored] = await storedEvents(t, '&distinct_id=elsewhere')
    expect(Object.keys(stored?.properties as object).filter((key) => key.includes('geoip'))).to.deep.equal([])
  })

  it("serves flags: decide looks the request's address up through the package's geoip service", async () => {
    expect(await flags('newcomer', { 'X-Forwarded-For': KNOWN_IP })).to.equal(true)
    expect(await flags('newcomer', { 'X-Forwarded-For': '198.51.100.7' })).to.equal(false)
  })

  it('serves flags from the person properties its step stored, whatever address asks', async () => {
    await capture('settler', { 'X-Forwarded-For': KNOWN_IP })
    expect(await flags('settler', { 'X-Forwarded-For': '198.51.100.7' })).to.equal(true)
  })
})
