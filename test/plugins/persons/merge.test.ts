import { expect } from 'chai'
import { merge, mergePersons } from '../../../plugins/persons/merge.ts'
import { findOrCreate } from '../../../plugins/persons/resolve.ts'
import { getDistinctIdsOfPerson } from '../../../plugins/persons/person-store.ts'
import type { PersonDocument } from '../../../plugins/persons/person-store.ts'
import { personUuid } from '../../../plugins/persons/person-uuid.ts'
import { copyProperties } from '../../../plugins/persons/properties.ts'
import { contextFor, nextProjectId, openPersonDb, personEvent, plain } from './fixtures.ts'
import type { PersonDb } from './fixtures.ts'

describe('persons: merges', () => {
  let t: PersonDb
  before(async () => {
    t = await openPersonDb('merge')
  })
  after(() => t.close())

  /** A person for `distinctId` with properties, created at `createdAt`. */
  async function personWith(
    projectId: number,
    distinctId: string,
    properties: Record<string, unknown>,
    createdAt: string,
    identified = false,
  ): Promise<PersonDocument> {
    const store = t.store()
    const { person } = await findOrCreate(store, personEvent({ distinctId, timestamp: new Date(createdAt) }), projectId)
    const written = await store.writePerson(person, {
      properties: copyProperties(properties),
      is_identified: identified,
    })
    return written!
  }
  const identify = (into: string, other: string, event = '$identify') =>
    personEvent({
      event,
      distinctId: into,
      properties: event === '$identify' ? { $anon_distinct_id: other } : { alias: other },
    })

  it('makes one identified person owning both ids when neither has one, its uuid from the distinct_id', async () => {
    const projectId = nextProjectId()
    const ctx = contextFor(projectId)
    const result = await merge(t.store(), identify('user', 'anon'), ctx, { other: 'anon', into: 'user' })
    expect(result?.created).to.equal(true)
    expect(result?.person).to.include({ id: personUuid(projectId, 'user'), is_identified: true })
    expect(await getDistinctIdsOfPerson(t.db, projectId, result!.person.id)).to.deep.equal(['anon', 'user'])
    expect(ctx.warnings).to.deep.equal([])
  })

  it('takes the uuid from the other id when only it had personless events, so they need no re-pointing', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    await store.recordPersonless(projectId, 'anon', new Date())
    const result = await merge(store, identify('user', 'anon'), contextFor(projectId), { other: 'anon', into: 'user' })
    expect(result?.person.id).to.equal(personUuid(projectId, 'anon'))
  })

  it('adds the missing id to the one existing person, and identifies it', async () => {
    const projectId = nextProjectId()
    const anon = await personWith(projectId, 'anon', { seen: 1 }, '2026-01-01T00:00:00Z')
    const result = await merge(t.store(), identify('user', 'anon'), contextFor(projectId), {
      other: 'anon',
      into: 'user',
    })
    expect(result?.person).to.include({ id: anon.id, is_identified: true })
    expect(await getDistinctIdsOfPerson(t.db, projectId, anon.id)).to.deep.equal(['anon', 'user'])
  })

  it('merges two persons into the distinct_id person: survivor wins, earliest created_at, version max + 1, every id moved, other deleted', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const user = await personWith(projectId, 'user', { plan: 'pro', email: 'u@x.test' }, '2026-02-01T00:00:00Z')
    const anon = await personWith(projectId, 'anon', { plan: 'free', utm_source: 'ad' }, '2026-01-01T00:00:00Z')
    await store.addDistinctId(projectId, anon.id, 'anon-2')
    for (let i = 0; i < 3; i++)
      await store.writePerson((await store.findById(projectId, anon.id))!, {
        properties: copyProperties({ plan: 'free', utm_source: 'ad', n: i }),
      })
    const otherVersion = (await store.findById(projectId, anon.id))!.version
    const result = await merge(store, identify('user', 'anon'), contextFor(projectId), { other: 'anon', into: 'user' })
    expect(result?.person.id).to.equal(user.id)
    const survivor = (await store.findById(projectId, user.id))!
    expect(plain(survivor.properties)).to.deep.equal({ plan: 'pro', email: 'u@x.test', utm_source: 'ad', n: 2 })
    expect(survivor.created_at.toISOString()).to.equal('2026-01-01T00:00:00.000Z')
    expect(survivor).to.include({ is_identified: true, version: Math.max(user.version, otherVersion) + 1 })
    expect(await getDistinctIdsOfPerson(t.db, projectId, user.id)).to.deep.equal(['anon', 'anon-2', 'user'])
    expect(await store.findById(projectId, anon.id)).to.equal(null)
  })

  it('refuses to merge an identified person away on $identify and $create_alias, with a warning, but not on $merge_dangerously', async () => {
    for (const event of ['$identify', '$create_alias']) {
      const projectId = nextProjectId()
      const ctx = contextFor(projectId)
      const user = await personWith(projectId, 'user', {}, '2026-01-01T00:00:00Z')
      const other = await personWith(projectId, 'other', {}, '2026-01-01T00:00:00Z', true)
      const result = await merge(t.store(), identify('user', 'other', event), ctx, { other: 'other', into: 'user' })
      expect(result?.person).to.include({ id: user.id, is_identified: true })
      expect(await t.store().findById(projectId, other.id), event).to.not.equal(null)
      expect(ctx.warnings.map((w) => w.type)).to.deep.equal(['cannot_merge_already_identified'])
      expect(ctx.warnings[0].details).to.include({
        sourcePersonDistinctId: 'other',
        targetPersonDistinctId: 'user',
        personId: user.id,
        otherPersonId: other.id,
      })
    }
    const projectId = nextProjectId()
    const ctx = contextFor(projectId)
    const user = await personWith(projectId, 'user', {}, '2026-01-01T00:00:00Z', true)
    const other = await personWith(projectId, 'other', {}, '2026-01-01T00:00:00Z', true)
    const result = await merge(t.store(), identify('user', 'other', '$merge_dangerously'), ctx, {
      other: 'other',
      into: 'user',
    })
    expect(result?.person.id).to.equal(user.id)
    expect(await t.store().findById(projectId, other.id)).to.equal(null)
    expect(ctx.warnings).to.deep.equal([])
  })

  it('refuses illegal ids on either side with a warning, and does nothing for an id merged with itself', async () => {
    const projectId = nextProjectId()
    const ctx = contextFor(projectId)
    expect(await merge(t.store(), identify('user', 'null'), ctx, { other: 'null', into: 'user' })).to.equal(undefined)
    expect(await merge(t.store(), identify('Anonymous', 'anon'), ctx, { other: 'anon', into: 'Anonymous' })).to.equal(
      undefined,
    )
    expect(await merge(t.store(), identify('user', 'user'), ctx, { other: 'user', into: 'user' })).to.equal(undefined)
    expect(ctx.warnings.map((w) => [w.type, w.details?.illegalDistinctId])).to.deep.equal([
      ['cannot_merge_with_illegal_distinct_id', 'null'],
      ['cannot_merge_with_illegal_distinct_id', 'Anonymous'],
    ])
    expect(await t.db.collection('persons').countDocuments({ project_id: projectId })).to.equal(0)
  })

  it('identifies the person when both ids already belong to it', async () => {
    const projectId = nextProjectId()
    const person = await personWith(projectId, 'user', {}, '2026-01-01T00:00:00Z')
    await t.store().addDistinctId(projectId, person.id, 'anon')
    const result = await merge(t.store(), identify('user', 'anon'), contextFor(projectId), {
      other: 'anon',
      into: 'user',
    })
    expect(result?.person).to.include({ id: person.id, is_identified: true })
  })

  it('starts over when the merged-away person changed after it was read, and folds in the newer write', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const user = await personWith(projectId, 'user', { plan: 'pro' }, '2026-01-01T00:00:00Z')
    const anon = await personWith(projectId, 'anon', { a: 1 }, '2026-01-01T00:00:00Z')
    await t.store().writePerson(anon, { properties: copyProperties({ a: 1, late: 'write', plan: 'free' }) }) // a concurrent writer
    expect(await mergePersons(store, user, anon)).to.equal(null)
    expect((await store.findById(projectId, anon.id))?.merging).to.equal(undefined)
    const result = await merge(store, identify('user', 'anon'), contextFor(projectId), { other: 'anon', into: 'user' })
    expect(plain(result!.person.properties)).to.include({ plan: 'pro', a: 1, late: 'write' })
    expect(await store.findById(projectId, anon.id)).to.equal(null)
    expect(plain((await store.findById(projectId, user.id))!.properties)).to.include({ late: 'write', plan: 'pro' })
  })

  it('merges into a survivor that changed after it was read, keeping its newer write', async () => {
    const projectId = nextProjectId()
    const user = await personWith(projectId, 'user', { plan: 'pro' }, '2026-01-01T00:00:00Z')
    const anon = await personWith(projectId, 'anon', { plan: 'free', a: 1 }, '2026-01-01T00:00:00Z')
    await t.store().writePerson(user, { properties: copyProperties({ plan: 'pro', newer: true }) })
    const survivor = await mergePersons(t.store(), user, anon)
    expect(plain(survivor!.properties)).to.deep.equal({ plan: 'pro', newer: true, a: 1 })
    expect(await t.store().findById(projectId, anon.id)).to.equal(null)
  })

  it('follows an alias chain into one person', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    for (const [into, other] of [
      ['b', 'a'],
      ['c', 'b'],
      ['d', 'c'],
    ]) {
      await findOrCreate(store, personEvent({ distinctId: other }), projectId)
      await merge(store, identify(into, other, '$create_alias'), contextFor(projectId), { other, into })
    }
    const person = await store.findByDistinctId(projectId, 'a', new Date())
    expect(await getDistinctIdsOfPerson(t.db, projectId, person!.id)).to.deep.equal(['a', 'b', 'c', 'd'])
    expect(await t.db.collection('persons').countDocuments({ project_id: projectId })).to.equal(1)
  })
})
