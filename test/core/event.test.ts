import { expect } from 'chai'
import { fromWire, withUuid } from '../../core/event.ts'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { startTestService, storedEvents } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'

const at = { receivedAt: new Date('2026-01-01T00:00:02.000Z') }

describe('event', () => {
  it('makes the first form of a wire event, with top-level $set merged over properties.$set', () => {
    const event = fromWire(
      {
        event: 'e',
        distinct_id: 7,
        properties: { a: 1, $set: { x: 1, y: 1 } },
        $set: { y: 2 },
        timestamp: '2026-01-01T00:00:01.000Z',
      },
      { receivedAt: new Date('2026-01-01T00:00:02.000Z') },
    )
    expect(event).to.deep.equal({
      uuid: '',
      event: 'e',
      distinctId: '7',
      properties: { a: 1, $set: { x: 1, y: 2 } },
      timestamp: new Date('2026-01-01T00:00:01.000Z'),
    })
  })

  it('stores a uuid in lower case, whatever case the client sent it in', () => {
    const event = fromWire(
      { event: 'e', distinct_id: 'd', uuid: '0190A000-0000-7000-8000-0000000000AB' },
      { receivedAt: new Date() },
    )
    expect(event.uuid).to.equal('0190a000-0000-7000-8000-0000000000ab')
  })
})

describe('event: the uuid every stored event has', () => {
  const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

  it('withUuid keeps an event uuid and gives a UUIDv7 of its timestamp to an event without one', () => {
    const kept = fromWire({ event: 'e', distinct_id: 'd', uuid: '0190a000-0000-7000-8000-0000000000ab' }, at)
    expect(withUuid(kept)).to.equal(kept)
    const made = withUuid(fromWire({ event: 'e', distinct_id: 'd', timestamp: '2026-01-01T00:00:00Z' }, at))
    expect(made.uuid).to.match(V7)
    expect(parseInt(made.uuid.replace(/-/g, '').slice(0, 12), 16)).to.equal(Date.parse('2026-01-01T00:00:00Z'))
  })

  describe('with a third-party validate step that makes no uuid', () => {
    /** Keeps every event as it is: what an operator's replacement of validate may well do. */
    const bareValidate = definePlugin({
      name: 'bare-validate',
      apiVersion: API_VERSION,
      setup(api) {
        api.hooks.validate.tap({ name: api.id }, () => undefined)
      },
    })
    let t: TestService
    before(async () => {
      t = await startTestService(
        { plugins: [{ plugin: 'bare-validate' }, { plugin: 'sink-mongo', required: true }] },
        { builtIns: { ...builtInPlugins, 'bare-validate': bareValidate } },
      )
    })
    after(() => t.close())

    it('stores every uuid-less event, each with a uuid of its own (the sinks key events by uuid)', async () => {
      const batch = ['one', 'two', 'three'].map((event) => ({ event, distinct_id: 'd', properties: {} }))
      const response = await fetch(`${t.url}/batch`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ api_key: t.project.api_token, batch }),
      })
      expect(response.status).to.equal(200)
      const stored = await storedEvents(t)
      expect(stored.map((e) => e.event)).to.have.members(['one', 'two', 'three'])
      const uuids = stored.map((e) => e.uuid as string)
      for (const uuid of uuids) expect(uuid).to.match(V7)
      expect(new Set(uuids).size).to.equal(3)
    })
  })
})
