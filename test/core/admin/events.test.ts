/**
 * The admin API reads events through the `events` service of the sink that stores them, so it
 * reads the collection the operator configured for sink-mongo, not a fixed `events`.
 */
import { expect } from 'chai'
import { startTestService, storedEvents } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { uuidv7 } from '../../../core/capture/uuid.ts'

const FIXTURES = new URL('../../fixtures/plugins/', import.meta.url).pathname

async function send(t: TestService, events: Array<Record<string, unknown>>): Promise<void> {
  const response = await fetch(`${t.url}/batch/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ api_key: t.project.api_token, batch: events }),
  })
  expect(response.status, await response.clone().text()).to.equal(200)
}

const events = (n: number, name: string) =>
  Array.from({ length: n }, (_, i) => ({ event: name, distinct_id: `reader-${i}`, uuid: uuidv7() }))

describe('admin API: events', () => {
  it("reads the events of sink-mongo's configured collection, paged, and nothing of `events`", async () => {
    const t = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'sink-mongo', required: true, options: { collection: 'audit_trail' } },
      ],
    })
    try {
      const sent = events(5, 'kept elsewhere')
      await send(t, sent)
      const db = t.service.storage.db
      expect(await db.collection('audit_trail').countDocuments({ project_id: t.project.id })).to.equal(5)
      expect(await db.collection('events').countDocuments()).to.equal(0)
      const read = await storedEvents(t)
      expect(read.map((e) => e.uuid)).to.have.members(sent.map((e) => e.uuid))
      expect(read.every((e) => e.event === 'kept elsewhere' && e.id === e.uuid)).to.equal(true)
      const first = (await (await t.admin('GET', `/api/projects/${t.project.id}/events?limit=3`)).json()) as {
        results: Array<{ uuid: string }>
        next: string
      }
      const second = (await (await t.admin('GET', first.next.replace(t.url, ''))).json()) as {
        results: Array<{ uuid: string }>
        next: string | null
      }
      expect([...first.results, ...second.results].map((e) => e.uuid)).to.deep.equal(read.map((e) => e.uuid))
      expect(second.next).to.equal(null)
    } finally {
      await t.close()
    }
  })

  it('reads through the first of two sink-mongo instances, the second only storing', async () => {
    const t = await startTestService({
      plugins: [
        { plugin: 'validate' },
        { plugin: 'sink-mongo', required: true, options: { collection: 'primary_events' } },
        { plugin: 'sink-mongo', id: 'archive', required: true, options: { collection: 'archived_events' } },
      ],
    })
    try {
      await send(t, events(2, 'twice stored'))
      expect(await t.service.storage.db.collection('archived_events').countDocuments()).to.equal(2)
      await t.service.storage.db.collection('archived_events').insertOne({ project_id: t.project.id, uuid: 'x' })
      expect(await storedEvents(t)).to.have.length(2)
    } finally {
      await t.close()
    }
  })

  it('answers 404 saying why when no configured plugin stores events for reading', async () => {
    const t = await startTestService(
      { plugins: [{ plugin: 'validate' }, { plugin: './ok-sink', required: true }] },
      { configDir: FIXTURES },
    )
    try {
      await send(t, events(1, 'not readable'))
      const response = await t.admin('GET', `/api/projects/${t.project.id}/events`)
      expect(response.status).to.equal(404)
      const body = (await response.json()) as Record<string, unknown>
      expect(body).to.include({ type: 'validation_error', code: 'not_found' })
      expect(body.detail).to.match(/events service/)
    } finally {
      await t.close()
    }
  })
})
