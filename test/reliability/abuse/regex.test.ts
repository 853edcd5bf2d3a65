import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { readDefinitions } from '../../../plugins/decide/definitions/import.ts'
import { replaceDefinitions } from '../../../plugins/decide/store/replace.ts'

type Json = Record<string, any>

/** Patterns that take exponential time on a backtracking engine, ordinary and with a back-reference. */
const CATASTROPHIC = ['^(a+)+$', '^(a|aa)*c$', '^(\\w+\\s?)*$', '^(a*)*(\\1)b$', '(?=(a+)+$)x']
const LONG_INPUT = `${'a'.repeat(50_000)}!`
const BOUND_MS = 2_000

const PLUGINS = [
  { plugin: 'validate' },
  { plugin: 'persons' },
  { plugin: 'decide', options: { pollIntervalMs: 200 } },
  { plugin: 'sink-mongo', required: true },
]

const regexFilter = (value: string, operator = 'regex') => ({ key: 'email', type: 'person', operator, value })

describe('catastrophic regular expressions in flags and cohorts', function () {
  this.timeout(60_000)
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: PLUGINS })
    const flags = CATASTROPHIC.flatMap((pattern, i) => [
      {
        id: 2 * i + 1,
        key: `regex-${i}`,
        active: true,
        filters: { groups: [{ properties: [regexFilter(pattern)], rollout_percentage: 100 }] },
      },
      {
        id: 2 * i + 2,
        key: `not-regex-${i}`,
        active: true,
        filters: { groups: [{ properties: [regexFilter(pattern, 'not_regex')], rollout_percentage: 100 }] },
      },
    ])
    flags.push({
      id: 99,
      key: 'in-cohort',
      active: true,
      filters: {
        groups: [{ properties: [{ key: 'id', type: 'cohort', value: 7 } as never], rollout_percentage: 100 }],
      },
    })
    const cohorts = {
      7: { name: 'slow', filters: { properties: { type: 'OR', values: CATASTROPHIC.map((p) => regexFilter(p)) } } },
    }
    const put = await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, { flags, cohorts })
    expect(put.status, await put.clone().text()).to.equal(200)
  })
  after(async () => t?.close())

  it('answers /flags for a 50,000-character input within the bound, every pattern evaluated', async () => {
    const started = performance.now()
    const response = await fetch(`${t.url}/flags/?v=2`, {
      method: 'POST',
      body: JSON.stringify({
        api_key: t.project.api_token,
        distinct_id: 'u',
        person_properties: { email: LONG_INPUT },
      }),
    })
    const elapsed = performance.now() - started
    expect(response.status).to.equal(200)
    const body = (await response.json()) as { flags: Record<string, { enabled: boolean }> }
    expect(Object.keys(body.flags)).to.have.length(2 * CATASTROPHIC.length + 1)
    expect(body.flags['regex-0']!.enabled).to.equal(false)
    expect(elapsed).to.be.lessThan(BOUND_MS)
  })

  it('keeps the event loop responsive while a stored person with the long value is evaluated', async () => {
    await fetch(`${t.url}/i/v0/e/`, {
      method: 'POST',
      body: JSON.stringify({
        api_key: t.project.api_token,
        event: '$identify',
        distinct_id: 'stored',
        properties: { $set: { email: LONG_INPUT } },
      }),
    })
    let maxLagMs = 0
    let last = performance.now()
    const probe = setInterval(() => {
      const now = performance.now()
      maxLagMs = Math.max(maxLagMs, now - last - 5)
      last = now
    }, 5)
    const started = performance.now()
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        fetch(`${t.url}/flags/?v=2`, {
          method: 'POST',
          body: JSON.stringify({ api_key: t.project.api_token, distinct_id: 'stored' }),
        }),
      ),
    )
    clearInterval(probe)
    expect(responses.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200])
    expect(performance.now() - started).to.be.lessThan(BOUND_MS * 2)
    expect(maxLagMs, 'longest event-loop stall').to.be.lessThan(500)
  })
})

/** Look-around and a back-reference: the backtracking engine; `(a+)+` over a run of a's backtracks exponentially. */
const LOOK_AROUND_CATASTROPHIC = '(?<=x)(a+)+\\1b'
/** Meets every LOOK_AROUND_CATASTROPHIC pattern: each match runs to the 10 ms limit. */
const CRAFTED = `x${'a'.repeat(30)}c`

/** `count` condition sets of one look-around filter each: none matches, so every set is tried. */
const heavyFlag = (id: number, count: number) => ({
  id,
  key: `heavy-${id}`,
  active: true,
  filters: {
    groups: Array.from({ length: count }, (_, i) => ({
      properties: [
        { key: 'name', type: 'person', operator: 'regex', value: `${LOOK_AROUND_CATASTROPHIC}${'b'.repeat(i)}` },
      ],
      rollout_percentage: 100,
    })),
  },
})
const ORDINARY = [
  {
    id: 1,
    key: 'ordinary-regex',
    active: true,
    filters: {
      groups: [
        { properties: [{ key: 'name', type: 'person', operator: 'regex', value: '^xa+c$' }], rollout_percentage: 100 },
      ],
    },
  },
  { id: 900, key: 'rollout', active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
]
/** 200 look-around filters in all, ten per flag: as many as the default budget (100 ms) accepts per flag. */
const TWENTY_BY_TEN = { flags: [...ORDINARY, ...Array.from({ length: 20 }, (_, i) => heavyFlag(10 + i, 10))] }

describe('a flags request with hundreds of look-around patterns: the time budget for regular expressions (regexBudgetMs, default 100 ms)', function () {
  this.timeout(60_000)
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: PLUGINS })
  })
  after(async () => t?.close())
  const putDefinitions = (definitions: unknown) =>
    t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, definitions)

  const heavyRequest = async () => {
    const started = performance.now()
    const body = { api_key: t.project.api_token, distinct_id: 'attacker', person_properties: { name: CRAFTED } }
    const response = await fetch(`${t.url}/flags/?v=2`, { method: 'POST', body: JSON.stringify(body) })
    return { status: response.status, body: (await response.json()) as Json, ms: performance.now() - started }
  }

  function expectBounded(answer: { status: number; body: Json; ms: number }, heavyKeys: string[]): void {
    expect(answer.status).to.equal(200)
    // 200 matches at the 10 ms limit took 2 s before the budget
    expect(answer.ms, `${answer.ms.toFixed(0)} ms`).to.be.below(1000)
    expect(answer.body.errorsWhileComputingFlags).to.equal(true)
    expect(answer.body.flags['ordinary-regex']).to.deep.include({ enabled: true })
    expect(answer.body.flags.rollout).to.deep.include({ enabled: true })
    const failed = heavyKeys.filter((key) => answer.body.flags[key].failed === true)
    expect(failed.length).to.be.at.least(heavyKeys.length - 1)
    for (const key of failed)
      expect(answer.body.flags[key]).to.deep.include({
        enabled: false,
        variant: null,
        reason: {
          code: 'timeout',
          condition_index: null,
          description: "Timeout: the request's time budget for regular expressions was used up",
        },
      })
  }

  it('answers within the budget: the flags past it fail with timeout, the others are answered', async () => {
    expect((await putDefinitions(TWENTY_BY_TEN)).status).to.equal(200)
    expectBounded(
      await heavyRequest(),
      TWENTY_BY_TEN.flags.slice(2).map((f) => f.key),
    )
  })

  it('keeps /_health answering promptly while such a request is evaluated', async () => {
    const heavy = heavyRequest()
    let done = false
    void heavy.finally(() => (done = true))
    const waits: number[] = []
    while (!done) {
      const started = performance.now()
      expect((await fetch(`${t.url}/_health`)).status).to.equal(200)
      waits.push(performance.now() - started)
    }
    expect((await heavy).status).to.equal(200)
    expect(waits.length).to.be.at.least(1)
    // it waited for the whole 2 s evaluation before
    expect(Math.max(...waits), waits.map((w) => w.toFixed(0)).join(' ')).to.be.below(500)
  })

  it('refuses to import a flag with 200 look-around filters: 400 naming the flag, condition set and property; nothing is written', async () => {
    const response = await putDefinitions({ flags: [...ORDINARY, heavyFlag(10, 200)] })
    expect(response.status).to.equal(400)
    const body = (await response.json()) as Json
    expect(body).to.include({
      type: 'validation_error',
      code: 'too_many_backtracking_regexes',
      attr: 'flags.2.filters.groups.10.properties.0.value',
    })
    expect(body.detail)
      .to.include('flag "heavy-10", condition set 11, property "name"')
      .and.include('200 regular expressions')
    const stored = (await (await t.admin('GET', `/api/projects/${t.project.id}/flag_definitions`)).json()) as Json
    expect(stored.flags.map((f: Json) => f.key)).to.have.members(TWENTY_BY_TEN.flags.map((f) => f.key))
  })

  it('still bounds a 200-filter flag stored by other means (an older version, direct writes)', async () => {
    await replaceDefinitions(
      t.service.storage.db,
      t.project.id,
      readDefinitions({ flags: [...ORDINARY, heavyFlag(10, 200)] }, 200 * 10),
    )
    const deadline = Date.now() + 10_000
    let answer = await heavyRequest()
    while (answer.body.flags?.['heavy-11'] !== undefined && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      answer = await heavyRequest()
    }
    expect(answer.body.flags).to.have.property('heavy-10')
    expectBounded(answer, ['heavy-10'])
  })
})
