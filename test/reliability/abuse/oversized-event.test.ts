/**
 * One project sends events too large to store (a 9 MiB `$set` value, which the stored event
 * would hold twice: in its properties and in `person_properties`) while another project sends
 * steady load. The events of concurrent requests share one insert (group commit), so an
 * oversized document once failed every request of its group with a 503, the attacker's own
 * included, retried forever. Now: the attacker gets a 413 naming the event, every request of the
 * other project gets a 200, and every acknowledged event is stored once. Checked with the default
 * per-event limit (capture refuses the event) and with the limit raised so that the event reaches
 * storage (the insert refuses the document, for that request alone).
 */
import { expect } from 'chai'
import { randomUUID } from 'node:crypto'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { defaultPlugins } from '../helpers/default-plugins.ts'
import { CaptureLoad } from '../helpers/load.ts'
import { checkStore } from '../helpers/verify.ts'

const HUGE_VALUE_BYTES = 9 * 1024 * 1024
const ATTACKS = 6

async function attackWhileLoaded(
  t: TestService,
): Promise<{ statuses: number[]; bodies: Array<Record<string, unknown>>; load: CaptureLoad; victim: number }> {
  const created = await t.admin('POST', '/api/projects', { name: 'victim' })
  const victim = (await created.json()) as { id: number; api_token: string }
  const load = new CaptureLoad({ token: victim.api_token, concurrency: 12, persons: 20 })
  const huge = 'x'.repeat(HUGE_VALUE_BYTES)
  let attacked: () => void = () => undefined
  const done = new Promise<void>((resolve) => (attacked = resolve))
  const running = load.run(t.url, done)
  const statuses: number[] = []
  const bodies: Array<Record<string, unknown>> = []
  for (let i = 0; i < ATTACKS; i++) {
    const uuid = randomUUID()
    const body = JSON.stringify({
      api_key: t.project.api_token,
      batch: [
        { event: 'small', distinct_id: `attacker-${i}`, uuid: randomUUID(), properties: {} },
        { event: '$identify', distinct_id: `attacker-${i}`, uuid, properties: { $set: { huge } } },
      ],
    })
    const response = await fetch(`${t.url}/batch/`, { method: 'POST', body })
    statuses.push(response.status)
    bodies.push({ uuid, ...((await response.json()) as Record<string, unknown>) })
  }
  attacked()
  await running
  return { statuses, bodies, load, victim: victim.id }
}

describe("an event too large to store, sent next to another project's load", function () {
  this.timeout(120_000)

  for (const setup of [
    {
      name: 'with the default limit on one event (capture refuses it)',
      server: {},
      limit: /one event may take at most 1000000 bytes/,
    },
    {
      name: 'with the limit raised past what the database stores (the insert refuses it)',
      server: { eventLimitBytes: 32 * 1024 * 1024 },
      limit: /the database stores at most 16777215 bytes per event/,
    },
  ]) {
    describe(setup.name, () => {
      let t: TestService
      before(async () => {
        t = await startTestService({ plugins: defaultPlugins(), server: setup.server })
      })
      after(async () => t?.close())

      it('answers the attacker 413 naming the event, and every request of the other project 200, each event stored once', async () => {
        const { statuses, bodies, load, victim } = await attackWhileLoaded(t)
        const check = await checkStore(t.service.storage.db, victim, load)
        console.log(
          `      attacker: ${statuses.join(', ')}; other project: ${load.requests} requests, ${JSON.stringify(Object.fromEntries(load.statuses))}, ${check.events} events stored`,
        )
        expect(statuses).to.deep.equal(Array(ATTACKS).fill(413))
        for (const body of bodies) {
          expect(body).to.include({ type: 'validation_error', code: 'event_too_large' })
          expect(body.detail)
            .to.match(/^maximum event size exceeded: event /)
            .and.to.match(setup.limit)
        }
        expect(Object.fromEntries(load.statuses)).to.deep.equal({ 200: load.requests })
        expect(load.requests).to.be.greaterThan(ATTACKS)
        expect(check.missingEvents, 'acknowledged events not stored').to.deep.equal([])
        expect(check.missingPersonKeys, 'acknowledged $set keys not on the person').to.deep.equal([])
        expect(check.duplicates).to.equal(0)
        const hugeStored = await t.service.storage.db
          .collection('events')
          .countDocuments({ project_id: t.project.id, event: '$identify' })
        expect(hugeStored).to.equal(0)
      })
    })
  }
})
