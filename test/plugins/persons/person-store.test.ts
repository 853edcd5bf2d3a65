import { expect } from 'chai'
import {
  PERSON_COLLECTIONS,
  PersonStore,
  getDistinctIdsOfPerson,
  getPersonByDistinctId,
} from '../../../plugins/persons/person-store.ts'
import { batching } from '../../../core/model/batching.ts'
import { isDuplicateKey } from '../../../core/plugin-api.ts'
import { mergePersons } from '../../../plugins/persons/merge.ts'
import { copyProperties } from '../../../plugins/persons/properties.ts'
import { nextProjectId, openCountedPersonDb, plain } from './fixtures.ts'
import type { CountedPersonDb } from './fixtures.ts'

const NOW = new Date('2026-03-01T12:00:00Z')
const withProperties = (properties: Record<string, unknown>) => ({
  properties: copyProperties(properties),
  createdAt: NOW,
  isIdentified: false,
})
const init = (over = {}) => ({
  properties: copyProperties({}),
  createdAt: new Date('2026-01-01T00:00:00Z'),
  isIdentified: false,
  ...over,
})

describe('persons: person store', () => {
  let t: CountedPersonDb
  before(async () => {
    t = await openCountedPersonDb('person-store')
  })
  after(() => t.close())

  it('maps ids to a new person and reads it back by distinct id, with the document shapes of the README', async () => {
    const projectId = nextProjectId()
    const { person, taken } = await t.store().createPerson(
      projectId,
      'p-1',
      [
        { distinctId: 'a', version: 0 },
        { distinctId: 'b', version: 1 },
      ],
      init(),
    )
    expect(taken).to.deep.equal([])
    expect(person).to.include({ project_id: projectId, id: 'p-1', is_identified: false, version: 0 })
    const read = await getPersonByDistinctId(t.db, projectId, 'b')
    expect(read).to.deep.include({
      project_id: projectId,
      id: 'p-1',
      is_identified: false,
      version: 0,
      created_at: new Date('2026-01-01T00:00:00Z'),
    })
    expect(await getDistinctIdsOfPerson(t.db, projectId, 'p-1')).to.deep.equal(['a', 'b'])
    const mapping = await t.db
      .collection('person_distinct_ids')
      .findOne({ project_id: projectId, distinct_id: 'b' }, { projection: { _id: 0 } })
    expect(mapping).to.deep.equal({ project_id: projectId, distinct_id: 'b', person_id: 'p-1', version: 1 })
    expect(await getPersonByDistinctId(t.db, projectId, 'nobody')).to.equal(null)
  })

  it('tells its listener (the flags persons cache) of each person it writes, once the write is over', async () => {
    const written: string[] = []
    const store = new PersonStore(t.db, batching, undefined, (projectId, id) => written.push(`${projectId}:${id}`))
    const projectId = nextProjectId()
    const { person } = await store.createPerson(projectId, 'p-told', [{ distinctId: 'told', version: 0 }], init())
    expect(written).to.deep.equal([`${projectId}:p-told`])
    const next = await store.writePerson(person!, { properties: copyProperties({ plan: 'pro' }) })
    await store.markIdentified(next!)
    expect(written).to.deep.equal([`${projectId}:p-told`, `${projectId}:p-told`, `${projectId}:p-told`])
  })

  it('refuses a second mapping of one distinct id through the unique index', async () => {
    const projectId = nextProjectId()
    await t.store().createPerson(projectId, 'p-1', [{ distinctId: 'a', version: 0 }], init())
    const error = await t.db
      .collection('person_distinct_ids')
      .insertOne({ project_id: projectId, distinct_id: 'a', person_id: 'p-2', version: 0 })
      .catch((e: unknown) => e)
    expect(isDuplicateKey(error)).to.equal(true)
  })

  it('reports ids that another person already owns, and creates no person when it mapped none', async () => {
    const projectId = nextProjectId()
    await t.store().createPerson(projectId, 'p-1', [{ distinctId: 'a', version: 0 }], init())
    const second = await t.store().createPerson(projectId, 'p-2', [{ distinctId: 'a', version: 0 }], init())
    expect(second).to.deep.equal({ person: null, taken: ['a'] })
    expect(await t.store().findById(projectId, 'p-2')).to.equal(null)
  })

  it('makes exactly one person when many processes create the same id at once', async () => {
    const projectId = nextProjectId()
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.store().createPerson(projectId, 'same-uuid', [{ distinctId: 'x', version: 0 }], init()),
      ),
    )
    expect(results.every((r) => r.person?.id === 'same-uuid' && r.taken.length === 0)).to.equal(true)
    expect(await t.db.collection('persons').countDocuments({ project_id: projectId })).to.equal(1)
    expect(await t.db.collection('person_distinct_ids').countDocuments({ project_id: projectId })).to.equal(1)
  })

  it('recreates the empty person of a mapping whose creator never wrote it', async () => {
    const projectId = nextProjectId()
    await t.db
      .collection('person_distinct_ids')
      .insertOne({ project_id: projectId, distinct_id: 'orphan', person_id: 'p-lost', version: 0 })
    const person = await t.store().findByDistinctId(projectId, 'orphan', new Date('2026-02-02T00:00:00Z'))
    expect(person).to.include({ id: 'p-lost', is_identified: false, version: 0 })
    expect(plain(person!.properties)).to.deep.equal({})
  })

  it('writes properties only at the version they were read at, and bumps it', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const { person } = await store.createPerson(projectId, 'p-1', [{ distinctId: 'a', version: 0 }], init())
    const first = await store.writePerson(person!, { properties: copyProperties({ a: 1 }) })
    expect(first?.version).to.equal(1)
    expect(await store.writePerson(person!, { properties: copyProperties({ stale: true }) })).to.equal(null)
    expect(plain((await store.findById(projectId, 'p-1'))!.properties)).to.deep.equal({ a: 1 })
  })

  it('stores $, dotted, __proto__ and constructor keys exactly and reads them back as own data', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const { person } = await store.createPerson(projectId, 'p-1', [{ distinctId: 'a', version: 0 }], init())
    const hostile = copyProperties(
      JSON.parse(
        '{"$browser": "Firefox", "a.b": {"c.d": 1, "$e": 2}, "__proto__": {"polluted": true}, "constructor": "c", "$set": {"x": 1}}',
      ),
    )
    await store.writePerson(person!, { properties: hostile })
    const read = (await getPersonByDistinctId(t.db, projectId, 'a'))!
    expect(Object.keys(read.properties).sort()).to.deep.equal(['$browser', '$set', '__proto__', 'a.b', 'constructor'])
    expect(read.properties['a.b']).to.deep.equal({ 'c.d': 1, $e: 2 })
    expect(Object.getOwnPropertyDescriptor(read.properties, '__proto__')?.value).to.deep.equal({ polluted: true })
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
  })

  it('marks a person identified once, bumping the version', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const { person } = await store.createPerson(projectId, 'p-1', [{ distinctId: 'a', version: 0 }], init())
    const marked = await store.markIdentified(person!)
    expect(marked).to.include({ is_identified: true, version: 1 })
    expect(await store.markIdentified(marked!)).to.include({ is_identified: true, version: 1 })
  })

  it('records personless ids once and reports which ids were used personless', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    await store.recordPersonless(projectId, 'anon', new Date())
    await store.recordPersonless(projectId, 'anon', new Date())
    await t.store().recordPersonless(projectId, 'anon', new Date())
    expect(await t.db.collection('personless_distinct_ids').countDocuments({ project_id: projectId })).to.equal(1)
    expect([...(await store.usedPersonless(projectId, ['anon', 'other']))]).to.deep.equal(['anon'])
  })

  it('remembers a personless id per project: the same id in another project is still recorded there', async () => {
    const [first, second] = [nextProjectId(), nextProjectId()]
    const store = t.store()
    await store.recordPersonless(first, 'shared', new Date())
    expect(store.personlessRecorded(first, 'shared')).to.equal(true)
    expect(store.personlessRecorded(second, 'shared')).to.equal(false)
    await store.recordPersonless(second, 'shared', new Date())
    expect(
      await t.db
        .collection('personless_distinct_ids')
        .countDocuments({ distinct_id: 'shared', project_id: { $in: [first, second] } }),
    ).to.equal(2)
  })

  it('reads only the person (fresh) for a distinct id it found or created before', async () => {
    const projectId = nextProjectId()
    const creator = t.store()
    await creator.createPerson(projectId, 'p', [{ distinctId: 'd', version: 0 }], withProperties({ plan: 'free' }))
    t.finds.length = 0
    expect((await creator.findByDistinctId(projectId, 'd', NOW))?.id).to.equal('p')
    expect(t.finds).to.deep.equal([PERSON_COLLECTIONS.persons])
    const store = t.store()
    t.finds.length = 0
    expect(plain((await store.findByDistinctId(projectId, 'd', NOW))?.properties)).to.deep.equal({ plan: 'free' })
    expect(t.finds).to.deep.equal([PERSON_COLLECTIONS.distinctIds, PERSON_COLLECTIONS.persons])
    // another process writes the person
    await t
      .store()
      .writePerson((await store.findById(projectId, 'p'))!, { properties: copyProperties({ plan: 'pro' }) })
    t.finds.length = 0
    const again = await store.findByDistinctId(projectId, 'd', NOW)
    expect(plain(again?.properties)).to.deep.equal({ plan: 'pro' })
    expect(again?.version).to.equal(1)
    expect(t.finds).to.deep.equal([PERSON_COLLECTIONS.persons])
  })

  it('follows a merge made by another process to the survivor, then remembers the survivor', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const other = t.store()
    await store.createPerson(projectId, 'a', [{ distinctId: 'anon', version: 0 }], withProperties({ side: 'anon' }))
    await store.createPerson(projectId, 'b', [{ distinctId: 'user', version: 0 }], withProperties({ side: 'user' }))
    expect((await store.findByDistinctId(projectId, 'anon', NOW))?.id).to.equal('a')
    const [into, away] = await Promise.all([other.findById(projectId, 'b'), other.findById(projectId, 'a')])
    expect((await mergePersons(other, into!, away!))?.id).to.equal('b')
    t.finds.length = 0
    const found = await store.findByDistinctId(projectId, 'anon', NOW)
    expect(found?.id).to.equal('b')
    expect(plain(found?.properties)).to.deep.equal({ side: 'user' })
    expect(t.finds).to.deep.equal([
      PERSON_COLLECTIONS.persons,
      PERSON_COLLECTIONS.distinctIds,
      PERSON_COLLECTIONS.persons,
    ])
    t.finds.length = 0
    expect((await store.findByDistinctId(projectId, 'anon', NOW))?.id).to.equal('b')
    expect(t.finds).to.deep.equal([PERSON_COLLECTIONS.persons])
  })

  it('answers null once the person and its ids are gone, and remembers no id without a person', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    await store.createPerson(projectId, 'p', [{ distinctId: 'd', version: 0 }], withProperties({}))
    expect(await store.findByDistinctId(projectId, 'd', NOW)).to.not.equal(null)
    await t.db.collection(PERSON_COLLECTIONS.persons).deleteOne({ project_id: projectId, id: 'p' })
    await t.db.collection(PERSON_COLLECTIONS.distinctIds).deleteOne({ project_id: projectId, distinct_id: 'd' })
    expect(await store.findByDistinctId(projectId, 'd', NOW)).to.equal(null)
    t.finds.length = 0
    expect(await store.findByDistinctId(projectId, 'd', NOW)).to.equal(null)
    expect(t.finds).to.deep.equal([PERSON_COLLECTIONS.distinctIds])
  })
})
