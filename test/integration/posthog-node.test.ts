import { expect } from 'chai'
import { PostHog } from 'posthog-node'
import { startTestService, storedEvents } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'

describe('the real posthog-node SDK against the service', () => {
  let t: TestService
  before(async () => {
    t = await startTestService()
  })
  after(() => t.close())

  it('delivers captured and identify events through /batch/ (gzip), each stored once with its uuid', async () => {
    const client = new PostHog(t.project.api_token, { host: t.url, flushAt: 50, flushInterval: 0, disableGeoip: false })
    const captured: string[] = []
    client.on('capture', (message: { uuid?: string }) => message.uuid && captured.push(message.uuid))
    for (let i = 0; i < 20; i++)
      client.capture({ distinctId: `node-user-${i % 4}`, event: 'node event', properties: { i, nested: { ok: true } } })
    client.identify({ distinctId: 'node-user-0', properties: { email: 'a@example.com' } })
    client.capture({ distinctId: 'node-user-1', event: 'with groups', groups: { company: 'acme' } })
    await client.shutdown()

    const events = await storedEvents(t)
    expect(events).to.have.length(22)
    const identify = events.find((e) => e.event === '$identify')!
    expect((identify.properties as Record<string, unknown>).$set).to.deep.equal({ email: 'a@example.com' })
    const one = events.find((e) => e.event === 'node event' && (e.properties as { i: number }).i === 7)!
    expect(one.distinct_id).to.equal('node-user-3')
    expect((one.properties as Record<string, unknown>).$lib).to.equal('posthog-node')
    const groups = events.find((e) => e.event === 'with groups')!
    expect((groups.properties as Record<string, unknown>).$groups).to.deep.equal({ company: 'acme' })
    if (captured.length) expect(events.map((e) => e.uuid)).to.include.members(captured)
  })
})
