import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

/** Patterns that take exponential time on a backtracking engine, ordinary and with a back-reference. */
const CATASTROPHIC = ['^(a+)+$', '^(a|aa)*c$', '^(\\w+\\s?)*$', '^(a*)*(\\1)b$', '(?=(a+)+$)x']
const LONG_INPUT = 'a'.repeat(50_000) + '!'
const BOUND_MS = 2_000

const regexFilter = (value: string, operator = 'regex') => ({ key: 'email', type: 'person', operator, value })

describe('catastrophic regular expressions in flags and cohorts', function () {
  this.timeout(60_000)
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: [{ plugin: 'validate' }, { plugin: 'alias-resolve' }, { plugin: 'person-update' }, { plugin: 'decide' }, { plugin: 'sink-mongo', required: true }] })
    const flags = CATASTROPHIC.flatMap((pattern, i) => [
      { id: 2 * i + 1, key: `regex-${i}`, active: true, filters: { groups: [{ properties: [regexFilter(pattern)], rollout_percentage: 100 }] } },
      { id: 2 * i + 2, key: `not-regex-${i}`, active: true, filters: { groups: [{ properties: [regexFilter(pattern, 'not_regex')], rollout_percentage: 100 }] } },
    ])
    flags.push({ id: 99, key: 'in-cohort', active: true, filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 7 } as never], rollout_percentage: 100 }] } })
    const cohorts = { 7: { name: 'slow', filters: { properties: { type: 'OR', values: CATASTROPHIC.map((p) => regexFilter(p)) } } } }
    const put = await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, { flags, cohorts })
    expect(put.status, await put.clone().text()).to.equal(200)
  })
  after(async () => t?.close())

  it('answers /flags for a 50,000-character input within the bound, every pattern evaluated', async () => {
    const started = performance.now()
    const response = await fetch(`${t.url}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: t.project.api_token, distinct_id: 'u', person_properties: { email: LONG_INPUT } }) })
    const elapsed = performance.now() - started
    expect(response.status).to.equal(200)
    const body = (await response.json()) as { flags: Record<string, { enabled: boolean }> }
    expect(Object.keys(body.flags)).to.have.length(2 * CATASTROPHIC.length + 1)
    expect(body.flags['regex-0']!.enabled).to.equal(false)
    expect(elapsed).to.be.lessThan(BOUND_MS)
  })

  it('keeps the event loop responsive while a stored person with the long value is evaluated', async () => {
    await fetch(`${t.url}/i/v0/e/`, { method: 'POST', body: JSON.stringify({ api_key: t.project.api_token, event: '$identify', distinct_id: 'stored', properties: { $set: { email: LONG_INPUT } } }) })
    let maxLagMs = 0
    let last = performance.now()
    const probe = setInterval(() => {
      const now = performance.now()
      maxLagMs = Math.max(maxLagMs, now - last - 5)
      last = now
    }, 5)
    const started = performance.now()
    const responses = await Promise.all(Array.from({ length: 5 }, () => fetch(`${t.url}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: t.project.api_token, distinct_id: 'stored' }) })))
    clearInterval(probe)
    expect(responses.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200])
    expect(performance.now() - started).to.be.lessThan(BOUND_MS * 2)
    expect(maxLagMs, 'longest event-loop stall').to.be.lessThan(500)
  })
})
