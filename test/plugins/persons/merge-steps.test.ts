/**
 * A merge stopped between any two of its steps (as a process that died, or one that gave up after
 * too many concurrent changes, leaves it) is finished by the next process that meets it, with
 * nothing lost and nothing folded twice; marks never leave two merges pointing at each other.
 */
import { expect } from 'chai'
import { currentPerson, finishMerge, startMerge, STALE_MARK_MS } from '../../../plugins/persons/merge-steps.ts'
import { findOrCreate } from '../../../plugins/persons/resolve.ts'
import { updateEvent } from '../../../plugins/persons/update.ts'
import { PERSON_COLLECTIONS, getDistinctIdsOfPerson } from '../../../plugins/persons/person-store.ts'
import type { PersonDocument } from '../../../plugins/persons/person-store.ts'
import { copyProperties } from '../../../plugins/persons/properties.ts'
import { contextFor, nextProjectId, openPersonDb, personEvent, plain } from './fixtures.ts'
import type { PersonDb } from './fixtures.ts'

describe('persons: merge steps', () => {
  let t: PersonDb
  before(async () => {
    t = await openPersonDb('merge-steps')
  })
  after(() => t.close())

  async function personWith(
    projectId: number,
    distinctId: string,
    properties: Record<string, unknown>,
  ): Promise<PersonDocument> {
    const store = t.store()
    const { person } = await findOrCreate(store, personEvent({ distinctId }), projectId)
    return (await store.writePerson(person, { properties: copyProperties(properties) }))!
  }
  const raw = (projectId: number, id: string) =>
    t.db
      .collection<PersonDocument>(PERSON_COLLECTIONS.persons)
      .findOne({ project_id: projectId, id }, { projection: { _id: 0 } })

  /** user ← anon, with anon marked and committed by a process that then stopped. */
  async function committedMerge(
    projectId: number,
  ): Promise<{ user: PersonDocument; anon: PersonDocument; committed: PersonDocument }> {
    const user = await personWith(projectId, 'user', { plan: 'pro' })
    const anon = await personWith(projectId, 'anon', { plan: 'free', utm_source: 'ad' })
    const committed = (await startMerge(t.store(), user, anon))!
    expect(committed.merging).to.include({ into: user.id, committed: true })
    return { user, anon, committed }
  }

  it('refuses writes to a person whose merge is committed, and its distinct ids lead readers to the survivor, finishing the merge', async () => {
    const projectId = nextProjectId()
    const { user, anon, committed } = await committedMerge(projectId)
    expect(await t.store().writePerson(committed, { properties: copyProperties({ lost: true }) })).to.equal(null)
    const found = await t.store().findByDistinctId(projectId, 'anon', new Date())
    expect(found?.id).to.equal(user.id)
    expect(plain(found!.properties)).to.deep.equal({ plan: 'pro', utm_source: 'ad' })
    expect(await getDistinctIdsOfPerson(t.db, projectId, user.id)).to.deep.equal(['anon', 'user'])
    expect(await raw(projectId, anon.id)).to.equal(null)
  })

  it('does not fold twice: a key the survivor unset after the fold stays unset when a second process finishes the merge', async () => {
    const projectId = nextProjectId()
    const { user, committed } = await committedMerge(projectId)
    const folded = await finishMerge(t.store(), committed)
    const unset = await t.store().writePerson(folded, { properties: copyProperties({ plan: 'pro' }) })
    expect(unset).to.not.equal(null)
    // a second process read the committed mark before the first one deleted the person
    const again = await finishMerge(t.store(), committed)
    expect(plain(again.properties)).to.deep.equal({ plan: 'pro' })
    expect(plain((await raw(projectId, user.id))!.properties)).to.deep.equal({ plan: 'pro' })
  })

  it('moves on a distinct id added to a person after its merge moved the others', async () => {
    const projectId = nextProjectId()
    const { user, anon, committed } = await committedMerge(projectId)
    await finishMerge(t.store(), committed)
    // a process that read anon before the merge maps a new id to it afterwards
    await t.db
      .collection(PERSON_COLLECTIONS.distinctIds)
      .insertOne({ project_id: projectId, distinct_id: 'late', person_id: anon.id, version: 0 })
    expect((await t.store().findByDistinctId(projectId, 'late', new Date()))?.id).to.equal(user.id)
    expect(await getDistinctIdsOfPerson(t.db, projectId, user.id)).to.deep.equal(['anon', 'late', 'user'])
  })

  it('lets a writer holding the merged-away person land on the survivor', async () => {
    const projectId = nextProjectId()
    const { user, anon, committed } = await committedMerge(projectId)
    await finishMerge(t.store(), committed)
    const store = t.store()
    const event = personEvent({ distinctId: 'anon', properties: { $set: { written: 'after' } } })
    const resolved = {
      ...event,
      person: { id: anon.id, properties: anon.properties, createdAt: anon.created_at, mode: 'full' as const },
    }
    store.resolved.set(resolved, { person: anon, created: false })
    await updateEvent(store, resolved, contextFor(projectId), {
      skipFilteredWrites: true,
      setOnceFillsNull: true,
      maxKeysPerOperation: 1000,
    })
    expect(plain((await raw(projectId, user.id))!.properties)).to.include({ written: 'after', plan: 'pro' })
  })

  it('of two merges pointing at each other, commits at most one; the other is taken back and the persons keep their writes', async () => {
    const projectId = nextProjectId()
    const a = await personWith(projectId, 'a', { a: 1 })
    const b = await personWith(projectId, 'b', { b: 1 })
    const store = t.store()
    // the merge of a into b marks a first; the merge of b into a then marks b and sees a's mark
    const aMarked = (await store.markMerging(a, b.id))!
    expect(await startMerge(t.store(), a, b)).to.equal(null)
    // b's mark was taken back, so a's merge checks b, finds no mark, and commits
    expect((await raw(projectId, b.id))!.merging).to.equal(undefined)
    const aCommitted = (await store.commitMerging(aMarked))!
    const survivor = await finishMerge(store, aCommitted)
    expect(survivor.id).to.equal(b.id)
    expect(plain(survivor.properties)).to.deep.equal({ a: 1, b: 1 })
  })

  it('reads a person whose mark is not committed as it is, refuses writes to it, and takes back a mark left by a dead process', async () => {
    const projectId = nextProjectId()
    const a = await personWith(projectId, 'a', { a: 1 })
    const b = await personWith(projectId, 'b', { b: 1 })
    const marked = (await t.store().markMerging(a, b.id))!
    const store = t.store()
    expect((await store.findById(projectId, a.id))?.merging).to.include({ into: b.id, committed: false })
    expect(await store.writePerson(marked, { properties: copyProperties({ refused: true }) })).to.equal(null)
    await t.db
      .collection(PERSON_COLLECTIONS.persons)
      .updateOne(
        { project_id: projectId, id: a.id },
        { $set: { 'merging.since': new Date(Date.now() - STALE_MARK_MS - 1000) } },
      )
    const taken = await store.findById(projectId, a.id)
    expect(taken?.merging).to.equal(undefined)
    expect(await store.writePerson(taken!, { properties: copyProperties({ a: 2 }) })).to.not.equal(null)
    expect((await currentPerson(store, projectId, a.id))?.properties).to.deep.include({ a: 2 })
  })

  it('keeps a person whose committed merge lost its target for good, with its ids and properties', async () => {
    const projectId = nextProjectId()
    const { user, anon, committed } = await committedMerge(projectId)
    await t.db.collection(PERSON_COLLECTIONS.persons).deleteOne({ project_id: projectId, id: user.id })
    const kept = await finishMerge(t.store(), committed)
    expect(kept).to.include({ id: anon.id })
    expect(kept.merging).to.equal(undefined)
    expect(plain((await raw(projectId, anon.id))!.properties)).to.deep.equal({ plan: 'free', utm_source: 'ad' })
  })
})
