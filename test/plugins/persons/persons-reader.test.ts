import { expect } from 'chai'
import type { CommandStartedEvent, MongoClient } from 'mongodb'
import { PersonsReader } from '../../../plugins/persons/persons-reader.ts'
import { PERSON_COLLECTIONS } from '../../../plugins/persons/person-store.ts'
import { monitoredClient, testDbName } from '../../helpers/mongo.ts'
import { insertPerson } from './fixtures.ts'
import { batching } from '../../../core/model/batching.ts'

describe('persons: the persons service (PersonsReader)', () => {
  let client: MongoClient
  const finds: string[] = []
  before(async () => {
    client = await monitoredClient(
      (event: CommandStartedEvent) => event.commandName === 'find' && finds.push(String(event.command.find)),
    )
  })
  after(() => client.close())

  it('answers concurrent lookups from one find per collection, each with its own person', async () => {
    const db = client.db(testDbName('person-reader'))
    const ids = Array.from({ length: 20 }, (_, i) => `user-${i}`)
    await db
      .collection(PERSON_COLLECTIONS.distinctIds)
      .insertMany(ids.map((id, i) => ({ project_id: 7, distinct_id: id, person_id: `p-${i % 10}`, version: 0 })))
    await db.collection(PERSON_COLLECTIONS.persons).insertMany(
      Array.from({ length: 10 }, (_, i) => ({
        project_id: 7,
        id: `p-${i}`,
        properties: { n: i },
        is_identified: false,
        created_at: new Date(0),
        version: 0,
      })),
    )
    await db
      .collection(PERSON_COLLECTIONS.distinctIds)
      .insertOne({ project_id: 8, distinct_id: 'user-1', person_id: 'other-project', version: 0 })
    const reader = new PersonsReader(db, batching)
    finds.length = 0
    const people = await Promise.all([...ids, 'stranger'].map((id) => reader.byDistinctId(7, id)))
    expect(people.slice(0, 20).map((p) => p?.properties.n)).to.deep.equal(ids.map((_, i) => i % 10))
    expect(people[20]).to.equal(null)
    expect(finds).to.deep.equal([PERSON_COLLECTIONS.distinctIds, PERSON_COLLECTIONS.persons])
    await db.dropDatabase()
  })

  it('sees a write completed before the call (no cached answers)', async () => {
    const db = client.db(testDbName('person-reader'))
    const reader = new PersonsReader(db, batching)
    expect(await reader.byDistinctId(1, 'late')).to.equal(null)
    await db
      .collection(PERSON_COLLECTIONS.distinctIds)
      .insertOne({ project_id: 1, distinct_id: 'late', person_id: 'p', version: 0 })
    await db.collection(PERSON_COLLECTIONS.persons).insertOne({
      project_id: 1,
      id: 'p',
      properties: { plan: 'pro' },
      is_identified: true,
      created_at: new Date(0),
      version: 0,
    })
    expect((await reader.byDistinctId(1, 'late'))?.properties).to.deep.equal({ plan: 'pro' })
    await db.dropDatabase()
  })

  it('remembers the person id of a distinct id, and still reads the person fresh each time', async () => {
    const db = client.db(testDbName('person-reader'))
    await insertPerson(db, 1, 'p', ['d'], { plan: 'free' })
    const reader = new PersonsReader(db, batching)
    expect((await reader.byDistinctId(1, 'd'))?.properties).to.deep.equal({ plan: 'free' })
    await db
      .collection(PERSON_COLLECTIONS.persons)
      .updateOne({ project_id: 1, id: 'p' }, { $set: { properties: { plan: 'pro' }, version: 1 } })
    finds.length = 0
    expect((await reader.byDistinctId(1, 'd'))?.properties).to.deep.equal({ plan: 'pro' })
    expect(finds).to.deep.equal([PERSON_COLLECTIONS.persons])
    await db.dropDatabase()
  })

  it('follows a merge: the remembered person is gone, so the mapping is read again and the survivor answers', async () => {
    const db = client.db(testDbName('person-reader'))
    const persons = db.collection(PERSON_COLLECTIONS.persons)
    const mappings = db.collection(PERSON_COLLECTIONS.distinctIds)
    await insertPerson(db, 1, 'a', ['anon'], { side: 'anon' })
    await insertPerson(db, 1, 'b', ['user'], { side: 'user' })
    const reader = new PersonsReader(db, batching)
    expect((await reader.byDistinctId(1, 'anon'))?.properties).to.deep.equal({ side: 'anon' })
    // what a merge does (merge-steps.ts): move the ids to the survivor, then delete the merged-away person
    await mappings.updateMany({ project_id: 1, person_id: 'a' }, { $set: { person_id: 'b' } })
    await persons.deleteOne({ project_id: 1, id: 'a' })
    finds.length = 0
    expect((await reader.byDistinctId(1, 'anon'))?.properties).to.deep.equal({ side: 'user' })
    expect(finds).to.deep.equal([
      PERSON_COLLECTIONS.persons,
      PERSON_COLLECTIONS.distinctIds,
      PERSON_COLLECTIONS.persons,
    ])
    finds.length = 0
    expect((await reader.byDistinctId(1, 'anon'))?.properties).to.deep.equal({ side: 'user' })
    expect(finds).to.deep.equal([PERSON_COLLECTIONS.persons])
    await db.dropDatabase()
  })

  it('answers null once the person and its ids are deleted, and does not remember an id without a person', async () => {
    const db = client.db(testDbName('person-reader'))
    await insertPerson(db, 1, 'p', ['d'])
    const reader = new PersonsReader(db, batching)
    expect(await reader.byDistinctId(1, 'd')).to.not.equal(null)
    await db.collection(PERSON_COLLECTIONS.persons).deleteOne({ project_id: 1, id: 'p' })
    await db.collection(PERSON_COLLECTIONS.distinctIds).deleteOne({ project_id: 1, distinct_id: 'd' })
    expect(await reader.byDistinctId(1, 'd')).to.equal(null)
    finds.length = 0
    expect(await reader.byDistinctId(1, 'd')).to.equal(null)
    expect(finds).to.deep.equal([PERSON_COLLECTIONS.distinctIds])
    await db.dropDatabase()
  })

  it('sends evenly spaced lookups made within the read spacing as one find, each answered with its own person', async () => {
    const db = client.db(testDbName('person-reader'))
    const ids = Array.from({ length: 6 }, (_, i) => `spaced-${i}`)
    for (const [i, id] of ids.entries()) await insertPerson(db, 1, `p-${i}`, [id], { n: i })
    // the test's spacing is wide so that a loaded machine's late timers stay inside it
    const reader = new PersonsReader(db, batching, { spacingMs: 800 })
    await Promise.all(ids.map((id) => reader.byDistinctId(1, id))) // remembers each id's person
    await new Promise((resolve) => setTimeout(resolve, 900))
    finds.length = 0
    const answers: Promise<unknown>[] = []
    for (const id of ids) {
      answers.push(reader.byDistinctId(1, id).then((person) => person?.properties.n))
      await new Promise((resolve) => setTimeout(resolve, 15))
    }
    expect(await Promise.all(answers)).to.deep.equal([0, 1, 2, 3, 4, 5])
    // the first after a quiet spell goes at once, the five that follow it share the next find
    expect(finds).to.deep.equal([PERSON_COLLECTIONS.persons, PERSON_COLLECTIONS.persons])
    await db.dropDatabase()
  })
})
