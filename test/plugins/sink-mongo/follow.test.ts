import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import type { Collection, Db } from 'mongodb'
import { StoredEvents } from '../../../plugins/sink-mongo/reader.ts'
import type { EventDocument, EventsFollowQuery, StoredEvent } from '../../../core/plugin-api.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'

const eventDoc = (n: number, projectId = 1): EventDocument => ({
  project_id: projectId,
  uuid: `0190b000-0000-7000-8000-0000000000${String(n).padStart(2, '0')}`,
  event: `e${n}`,
  distinct_id: 'd',
  properties: { n },
  timestamp: new Date(),
  created_at: new Date(),
  person_mode: 'full',
})

describe('sink-mongo: following stored events', () => {
  let client: MongoClient
  let db: Db
  let collection: Collection<EventDocument>
  let events: StoredEvents
  before(async () => {
    client = await new MongoClient(await testMongoUrl()).connect()
    db = client.db(testDbName('follow_events'))
    collection = db.collection<EventDocument>('followed_events')
    events = new StoredEvents(collection)
  })
  after(async () => {
    await db.dropDatabase()
    await client.close()
  })

  async function follow(query: EventsFollowQuery) {
    const seen: StoredEvent[] = []
    const missed: number[] = []
    const follower = await events.follow(1, query, {
      event: (stored) => seen.push(stored),
      missed: (count) => missed.push(count),
      error: (error) => {
        throw error
      },
    })
    return { seen, missed, follower }
  }

  const until = async (check: () => boolean) => {
    const deadline = Date.now() + 10_000
    while (!check()) {
      if (Date.now() > deadline) throw new Error('timed out')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  it('sees inserts of its project only, with ids that sort in insertion order', async () => {
    const { seen, follower } = await follow({})
    await collection.insertMany([eventDoc(1), eventDoc(2, 2), eventDoc(3)])
    await until(() => seen.length === 2)
    expect(seen.map((s) => s.document.event)).to.deep.equal(['e1', 'e3'])
    expect(seen[0].id < seen[1].id).to.equal(true)
    expect(seen[0].document).to.not.have.property('_id')
    await follower.close()
  })

  it('catches up from an id: the newest catchUpLimit events, and how many it left out', async () => {
    const { seen: first, follower: one } = await follow({})
    await collection.insertOne(eventDoc(10))
    await until(() => first.length === 1)
    await one.close()
    await collection.insertMany([11, 12, 13, 14, 15].map((n) => eventDoc(n)))
    const { seen, missed, follower } = await follow({ after: first[0].id, catchUpLimit: 3 })
    expect(seen.map((s) => s.document.event)).to.deep.equal(['e13', 'e14', 'e15'])
    expect(missed).to.deep.equal([2])
    await follower.close()
  })

  it('refuses an id it did not issue with a 400 naming Last-Event-ID', async () => {
    try {
      await follow({ after: 'not-an-id' })
      expect.fail('accepted')
    } catch (error) {
      expect(error).to.include({ status: 400, attr: 'Last-Event-ID' })
    }
  })
})
