import { expect } from 'chai'
import { startTestService, storedEvents } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

const PLUGINS = (options: Record<string, unknown>) => [
  { plugin: 'validate' },
  { plugin: 'persons' },
  { plugin: 'decide', options: { pollIntervalMs: 200 } },
  { plugin: 'flag-attribution', options },
  { plugin: 'sink-mongo', required: true },
]

const FLAGS = {
  flags: [
    { id: 1, key: 'everyone', active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
    {
      id: 2,
      key: 'pros',
      active: true,
      filters: {
        groups: [
          { properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 },
        ],
      },
    },
  ],
  group_type_mapping: {},
  cohorts: {},
}

describe('flag-attribution plugin', () => {
  let t: TestService | undefined
  const capture = (batch: unknown[]) =>
    fetch(`${t!.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: t!.project.api_token, batch }) })
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('keeps $feature/* as sent, derives $active_feature_flags, and counts $feature_flag_called usage', async () => {
    const s = (t = await startTestService({ plugins: PLUGINS({}) }))
    const response = await capture([
      { event: 'clicked', distinct_id: 'u1', properties: { '$feature/beta': 'test', '$feature/off': false } },
      {
        event: '$feature_flag_called',
        distinct_id: 'u1',
        properties: { $feature_flag: 'beta', $feature_flag_response: 'test' },
      },
      {
        event: '$feature_flag_called',
        distinct_id: 'u2',
        properties: { $feature_flag: 'beta', $feature_flag_response: 'control' },
      },
      { event: '$feature_flag_called', distinct_id: 'u2', properties: {} },
    ])
    expect(response.status).to.equal(200)
    const events = await storedEvents(s)
    const clicked = events.find((e) => e.event === 'clicked')!
    expect(clicked.properties).to.deep.include({
      '$feature/beta': 'test',
      '$feature/off': false,
      $active_feature_flags: ['beta'],
    })
    expect(events.filter((e) => e.event === '$feature_flag_called')).to.have.length(2)
    const usage = (await (await s.admin('GET', `/api/projects/${s.project.id}/feature_flag_usage`)).json()) as {
      results: Array<{ flag_key: string; calls: number; values: string[] }>
    }
    expect(usage.results).to.have.length(1)
    expect(usage.results[0]).to.include({ flag_key: 'beta', calls: 2 })
    expect(usage.results[0].values).to.have.members(['test', 'control'])
    const warnings = (await (await s.admin('GET', `/api/projects/${s.project.id}/ingestion_warnings`)).json()) as {
      results: Array<{ type: string }>
    }
    expect(warnings.results.map((w) => w.type)).to.include('missing_feature_flag')
  })

  it('with evaluateMissing, adds the flags the service computes for the person to events that carry none', async () => {
    const s = (t = await startTestService({ plugins: PLUGINS({ evaluateMissing: true }) }))
    expect((await s.admin('PUT', `/api/projects/${s.project.id}/flag_definitions`, FLAGS)).status).to.equal(200)
    await capture([{ event: '$identify', distinct_id: 'pro-user', properties: { $set: { plan: 'pro' } } }])
    await capture([
      { event: 'viewed', distinct_id: 'pro-user' },
      { event: 'viewed', distinct_id: 'free-user' },
      { event: 'viewed', distinct_id: 'sdk-user', properties: { '$feature/everyone': false } },
    ])
    const events = await storedEvents(s, '&event=viewed')
    const byUser = Object.fromEntries(events.map((e) => [e.distinct_id, e.properties as Record<string, unknown>]))
    expect(byUser['pro-user']).to.deep.include({
      '$feature/everyone': true,
      '$feature/pros': true,
      $active_feature_flags: ['everyone', 'pros'],
    })
    expect(byUser['free-user']).to.deep.include({
      '$feature/everyone': true,
      '$feature/pros': false,
      $active_feature_flags: ['everyone'],
    })
    expect(byUser['sdk-user']['$feature/everyone']).to.equal(false)
    expect(byUser['sdk-user']).not.to.have.property('$feature/pros')
  })

  it('refuses to boot with evaluateMissing but no decide plugin before it', async () => {
    const error = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'flag-attribution', options: { evaluateMissing: true } },
        { plugin: 'sink-mongo' },
      ],
    }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(String(error)).to.match(/flags/)
  })
})
