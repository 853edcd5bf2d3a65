import { expect } from 'chai'
import { findOrCreate, resolveEvent } from '../../../plugins/persons/resolve.ts'
import { personUuid } from '../../../plugins/persons/person-uuid.ts'
import { copyProperties } from '../../../plugins/persons/properties.ts'
import { contextFor, nextProjectId, openPersonDb, personEvent, plain } from './fixtures.ts'
import type { PersonDb } from './fixtures.ts'

const options = { forceUpgrade: true, forceUpgradeAfterMs: 60_000 }

describe('persons: the aliasResolve step', () => {
  let t: PersonDb
  before(async () => {
    t = await openPersonDb('resolve')
  })
  after(() => t.close())

  it('creates the person of a new distinct id from the event and hands it to the personUpdate step', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const result = await resolveEvent(
      store,
      personEvent({ distinctId: 'new', properties: { $process_person_profile: true, a: 1 } }),
      contextFor(projectId),
      options,
    )
    expect(result.person).to.deep.include({
      id: personUuid(projectId, 'new'),
      mode: 'full',
      createdAt: new Date('2026-03-01T12:00:00Z'),
    })
    expect(plain(result.person!.properties)).to.deep.equal({
      $creator_event_uuid: '01900000-0000-7000-8000-000000000001',
    })
    expect(result.properties).to.deep.equal({ a: 1 })
    expect(store.resolved.get(result)).to.deep.include({ created: true })
    const again = await resolveEvent(store, personEvent({ distinctId: 'new' }), contextFor(projectId), options)
    expect(again.person?.id).to.equal(result.person?.id)
    expect(store.resolved.get(again)?.created).to.equal(false)
  })

  it('links a 5 MiB $anon_distinct_id or alias by its first 200 characters, the id a later event with it as distinct_id has', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const long = (c: string) => c.repeat(5 * 1024 * 1024)
    const identify = await resolveEvent(
      store,
      personEvent({ event: '$identify', distinctId: 'user', properties: { $anon_distinct_id: long('a') } }),
      contextFor(projectId),
      options,
    )
    const alias = await resolveEvent(
      store,
      personEvent({ event: '$create_alias', distinctId: 'user', properties: { alias: long('b') } }),
      contextFor(projectId),
      options,
    )
    const ids = await t.db.collection('person_distinct_ids').find({ project_id: projectId }).toArray()
    expect(ids.map((row) => row.distinct_id).sort()).to.deep.equal(['a'.repeat(200), 'b'.repeat(200), 'user'])
    expect(identify.properties.$anon_distinct_id).to.equal('a'.repeat(200))
    expect(alias.properties.alias).to.equal('b'.repeat(200))
    // capture cuts the distinct_id of an event to the same 200 characters: it is the same person
    const later = await resolveEvent(
      store,
      personEvent({ distinctId: 'a'.repeat(200) }),
      contextFor(projectId),
      options,
    )
    expect(later.person?.id).to.equal(identify.person?.id)
  })

  it('makes one person when many processes see the first event of an id at once', async () => {
    const projectId = nextProjectId()
    const results = await Promise.all(
      Array.from({ length: 10 }, () => findOrCreate(t.store(), personEvent({ distinctId: 'rush' }), projectId)),
    )
    expect(new Set(results.map((r) => r.person.id)).size).to.equal(1)
    expect(await t.db.collection('persons').countDocuments({ project_id: projectId })).to.equal(1)
    expect(await t.db.collection('person_distinct_ids').countDocuments({ project_id: projectId })).to.equal(1)
  })

  it('attributes a personless event of an unknown id to the fake person and strips its person operations', async () => {
    const projectId = nextProjectId()
    const event = personEvent({
      distinctId: 'ghost',
      personless: true,
      properties: { $process_person_profile: false, $set: { a: 1 }, $set_once: { b: 1 }, $unset: ['c'], keep: 1 },
    })
    const result = await resolveEvent(t.store(), event, contextFor(projectId), options)
    expect(result.properties).to.deep.equal({ $process_person_profile: false, keep: 1 })
    expect(result.person).to.deep.include({
      id: personUuid(projectId, 'ghost'),
      mode: 'propertyless',
      createdAt: new Date('1970-01-01T00:00:05Z'),
    })
    expect(plain(result.person!.properties)).to.deep.equal({})
    expect(await t.db.collection('persons').countDocuments({ project_id: projectId })).to.equal(0)
    expect(
      await t.db.collection('personless_distinct_ids').countDocuments({ project_id: projectId, distinct_id: 'ghost' }),
    ).to.equal(1)
  })

  it('attributes a personless event to an existing person without properties, or with them once the person is over a minute old', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const { person } = await findOrCreate(
      store,
      personEvent({ distinctId: 'known', timestamp: new Date('2026-03-01T12:00:00Z') }),
      projectId,
    )
    await store.writePerson(person, { properties: copyProperties({ plan: 'pro' }) })
    const soon = await resolveEvent(
      store,
      personEvent({ distinctId: 'known', personless: true, timestamp: new Date('2026-03-01T12:00:30Z') }),
      contextFor(projectId),
      options,
    )
    expect(soon.person).to.deep.include({ id: person.id, mode: 'propertyless' })
    expect(plain(soon.person!.properties)).to.deep.equal({})
    const later = await resolveEvent(
      store,
      personEvent({ distinctId: 'known', personless: true, timestamp: new Date('2026-03-01T12:05:00Z') }),
      contextFor(projectId),
      options,
    )
    expect(later.person).to.deep.include({ id: person.id, mode: 'force_upgrade' })
    expect(plain(later.person!.properties)).to.deep.include({ plan: 'pro' })
    const off = await resolveEvent(
      store,
      personEvent({ distinctId: 'known', personless: true, timestamp: new Date('2026-03-01T12:05:00Z') }),
      contextFor(projectId),
      { ...options, forceUpgrade: false },
    )
    expect(off.person?.mode).to.equal('propertyless')
  })

  it('resolves $identify to the merged person', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const anon = await resolveEvent(store, personEvent({ distinctId: 'anon' }), contextFor(projectId), options)
    const identified = await resolveEvent(
      store,
      personEvent({ event: '$identify', distinctId: 'user', properties: { $anon_distinct_id: 'anon' } }),
      contextFor(projectId),
      options,
    )
    expect(identified.person?.id).to.equal(anon.person?.id)
    expect((await store.findById(projectId, anon.person!.id))?.is_identified).to.equal(true)
  })

  it('resolves to the event distinct id person after a refused merge', async () => {
    const projectId = nextProjectId()
    const ctx = contextFor(projectId)
    const result = await resolveEvent(
      t.store(),
      personEvent({ event: '$identify', distinctId: 'user', properties: { $anon_distinct_id: 'undefined' } }),
      ctx,
      options,
    )
    expect(result.person?.id).to.equal(personUuid(projectId, 'user'))
    expect(ctx.warnings.map((w) => w.type)).to.deep.equal(['cannot_merge_with_illegal_distinct_id'])
    expect((await t.store().findById(projectId, result.person!.id))?.is_identified).to.equal(false)
  })
})
