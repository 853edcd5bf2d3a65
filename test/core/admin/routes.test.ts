import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

describe('admin API', () => {
  let t: TestService
  before(async () => {
    t = await startTestService()
  })
  after(() => t.close())

  it('refuses a missing or wrong key with 401 and a JSON error', async () => {
    const none = await fetch(`${t.url}/api/projects`)
    expect(none.status).to.equal(401)
    expect(await none.json()).to.include({ type: 'authentication_error', code: 'not_authenticated' })
    const wrong = await fetch(`${t.url}/api/projects`, { headers: { Authorization: 'Bearer wrong-key-wrong-key' } })
    expect(wrong.status).to.equal(401)
  })

  it('creates a project with PostHog-shaped public and secret keys', async () => {
    const response = await t.admin('POST', '/api/projects', { name: 'Shop', timezone: 'Europe/Paris' })
    expect(response.status).to.equal(201)
    const project = (await response.json()) as Record<string, unknown>
    expect(project).to.have.keys('id', 'name', 'api_token', 'secret_api_token', 'timezone')
    expect(project.api_token).to.match(/^phc_[A-Za-z0-9_-]{43}$/)
    expect(project.secret_api_token).to.match(/^phs_[A-Za-z0-9_-]{43}$/)
    expect(project.timezone).to.equal('Europe/Paris')
    const fetched = await (await t.admin('GET', `/api/projects/${project.id}`)).json()
    expect(fetched).to.deep.equal(project)
    const list = (await (await t.admin('GET', '/api/projects')).json()) as { results: unknown[] }
    expect(list.results).to.deep.include(project)
  })

  it('validates the body: 400 naming the field', async () => {
    const missing = await t.admin('POST', '/api/projects', {})
    expect(missing.status).to.equal(400)
    expect(await missing.json()).to.include({ type: 'validation_error', attr: 'name' })
    const zone = await t.admin('POST', '/api/projects', { name: 'x', timezone: 'Mars/Olympus' })
    expect(await zone.json()).to.include({ attr: 'timezone' })
    const junk = await fetch(`${t.url}/api/projects`, {
      method: 'POST',
      body: '{oops',
      headers: { Authorization: `Bearer ${t.adminKey}`, 'Content-Type': 'application/json' },
    })
    expect(junk.status).to.equal(400)
    expect(await junk.json()).to.include({ code: 'invalid_json' })
  })

  it('answers 404 for an unknown project', async () => {
    expect((await t.admin('GET', '/api/projects/999999')).status).to.equal(404)
    expect((await t.admin('GET', '/api/projects/abc/events')).status).to.equal(404)
  })

  it('lists events newest first, filtered, with a cursor that pages without gaps or repeats', async () => {
    const base = Date.parse('2026-01-01T00:00:00Z')
    const batch = Array.from({ length: 7 }, (_, i) => ({
      event: i % 2 ? 'odd' : 'even',
      distinct_id: `pager-${i % 3}`,
      timestamp: new Date(base + Math.floor(i / 2) * 1000).toISOString(),
      uuid: `0190a000-0000-7000-8000-1000000000${String(i).padStart(2, '0')}`,
    }))
    await fetch(`${t.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: t.project.api_token, batch }) })
    const seen: string[] = []
    let next: string | null = `/api/projects/${t.project.id}/events?limit=3&after=2025-12-31T00:00:00Z`
    while (next) {
      const page = (await (await t.admin('GET', next.replace(t.url, ''))).json()) as {
        results: Array<{ uuid: string; timestamp: string }>
        next: string | null
      }
      seen.push(...page.results.map((e) => e.uuid))
      next = page.next
    }
    const expected = [...batch]
      .sort((a, b) => (a.timestamp === b.timestamp ? (a.uuid < b.uuid ? 1 : -1) : a.timestamp < b.timestamp ? 1 : -1))
      .map((e) => e.uuid)
    expect(seen).to.deep.equal(expected)
    const odd = (await (
      await t.admin('GET', `/api/projects/${t.project.id}/events?event=odd&distinct_id=pager-1`)
    ).json()) as { results: Array<{ event: string; distinct_id: string }> }
    expect(odd.results.length).to.be.greaterThan(0)
    expect(odd.results.every((e) => e.event === 'odd' && e.distinct_id === 'pager-1')).to.equal(true)
    const before = (await (
      await t.admin('GET', `/api/projects/${t.project.id}/events?before=2026-01-01T00:00:01Z`)
    ).json()) as { results: unknown[] }
    expect(before.results).to.have.length(2)
  })

  it('rejects bad query parameters with 400', async () => {
    expect((await t.admin('GET', `/api/projects/${t.project.id}/events?limit=0`)).status).to.equal(400)
    expect((await t.admin('GET', `/api/projects/${t.project.id}/events?after=yesterday`)).status).to.equal(400)
    expect((await t.admin('GET', `/api/projects/${t.project.id}/events?cursor=garbage`)).status).to.equal(400)
  })
})
