import { expect } from 'chai'
import { PERSON_COLLECTIONS } from '../../../plugins/persons/person-store.ts'
import type { PersonStore } from '../../../plugins/persons/person-store.ts'
import { resolveEvent } from '../../../plugins/persons/resolve.ts'
import { SequencePersons } from '../../../plugins/persons/sequence-persons.ts'
import { copyProperties } from '../../../plugins/persons/properties.ts'
import { updateEvent } from '../../../plugins/persons/update.ts'
import type { EventContext, IngestEvent } from '../../../core/plugin-api.ts'
import { contextFor, nextProjectId, openCountedPersonDb, personEvent, plain } from './fixtures.ts'
import type { CountedPersonDb } from './fixtures.ts'

const RESOLVE = { forceUpgrade: true, forceUpgradeAfterMs: 60_000 }
const UPDATE = { skipFilteredWrites: true, setOnceFillsNull: true, maxKeysPerOperation: 1000 }

describe('persons: the persons of a sequence of events', () => {
  let t: CountedPersonDb
  before(async () => {
    t = await openCountedPersonDb('sequence-persons')
  })
  after(() => t.close())

  /** Both person steps for one event, as the pipeline runs them, in the sequence of `ctx`. */
  async function run(store: PersonStore, ctx: EventContext, over: Partial<IngestEvent>): Promise<IngestEvent> {
    const resolved = await resolveEvent(store, personEvent(over), ctx, RESOLVE)
    return (await updateEvent(store, resolved, ctx, UPDATE)) ?? resolved
  }

  it('reads the person once for 100 events, each showing the $set of those before it', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    await run(store, contextFor(projectId), { distinctId: 'u' })
    const ctx = contextFor(projectId)
    t.finds.length = 0
    const events: IngestEvent[] = []
    for (let i = 0; i < 100; i++)
      events.push(await run(store, ctx, { distinctId: 'u', properties: i % 10 === 0 ? { $set: { n: i } } : {} }))
    expect(events.map((event) => event.person?.properties.n)).to.deep.equal(
      events.map((_, i) => Math.floor(i / 10) * 10),
    )
    expect(t.finds).to.deep.equal([PERSON_COLLECTIONS.persons])
    const stored = await t.store().findByDistinctId(projectId, 'u', new Date())
    expect(stored).to.deep.include({ version: 10 })
    expect(stored?.properties.n).to.equal(90)
  })

  it('keeps what another process wrote during the sequence: the next write is refused, re-reads and lands on it', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const ctx = contextFor(projectId)
    await run(store, ctx, { distinctId: 'u', properties: { $set: { mine: 1 } } })
    const other = t.store()
    const theirs = await other.findByDistinctId(projectId, 'u', new Date())
    await other.writePerson(theirs!, { properties: copyProperties({ ...theirs!.properties, theirs: 1 }) })
    // writes nothing: shows the person as the sequence last saw it
    expect(plain((await run(store, ctx, { distinctId: 'u' })).person?.properties)).to.not.have.property('theirs')
    const written = await run(store, ctx, { distinctId: 'u', properties: { $set: { mine: 2 } } })
    expect(plain(written.person?.properties)).to.include({ mine: 2, theirs: 1 })
    expect(plain((await run(store, ctx, { distinctId: 'u' })).person?.properties)).to.include({ mine: 2, theirs: 1 })
    expect(plain((await other.findByDistinctId(projectId, 'u', new Date()))?.properties)).to.include({
      mine: 2,
      theirs: 1,
    })
  })

  it('follows a merge within the sequence, and shows one person’s writes under each of its ids', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const ctx = contextFor(projectId) // one sequence for several ids, as a historical migration runs
    const anon = await run(store, ctx, { distinctId: 'anon', properties: { $set: { from: 'anon' } } })
    await run(store, ctx, { distinctId: 'user', properties: { $set: { from: 'user' } } })
    const identify = await run(store, ctx, {
      distinctId: 'user',
      event: '$identify',
      properties: { $anon_distinct_id: 'anon' },
    })
    const after = await run(store, ctx, { distinctId: 'anon' })
    expect(after.person?.id).to.equal(identify.person?.id).and.not.equal(anon.person?.id)
    await run(store, ctx, { distinctId: 'user', properties: { $set: { plan: 'pro' } } })
    expect(plain((await run(store, ctx, { distinctId: 'anon' })).person?.properties)).to.include({
      plan: 'pro',
      from: 'user',
    })
  })

  it('remembers the existing person for personless events too', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    await run(store, contextFor(projectId), { distinctId: 'u', properties: { $set: { plan: 'pro' } } })
    const ctx = contextFor(projectId)
    t.finds.length = 0
    const later = new Date('2026-03-01T12:05:00Z')
    const events: IngestEvent[] = []
    for (let i = 0; i < 3; i++)
      events.push(
        await resolveEvent(store, personEvent({ distinctId: 'u', personless: true, timestamp: later }), ctx, RESOLVE),
      )
    expect(events.map((event) => event.person?.mode)).to.deep.equal(['force_upgrade', 'force_upgrade', 'force_upgrade'])
    expect(plain(events[2]!.person?.properties)).to.include({ plan: 'pro' })
    expect(t.finds).to.deep.equal([PERSON_COLLECTIONS.persons])
  })

  it('keeps at most 100 persons in one sequence (a historical migration of many ids)', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const ctx = contextFor(projectId)
    for (let i = 0; i < 150; i++) await run(store, ctx, { distinctId: `u${i}` })
    expect(SequencePersons.of(ctx).kept).to.be.within(1, 100)
    t.finds.length = 0
    expect((await run(store, ctx, { distinctId: 'u149' })).person?.id).to.be.a('string')
    expect(t.finds).to.deep.equal([])
  })
})
