import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import { StoredEvents } from '../../../plugins/sink-mongo/reader.ts'
import type { EventDocument } from '../../../core/plugin-api.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'

const BASE = Date.parse('2026-03-01T00:00:00Z')

/** Event `n` of project 1: two per second, alternating names and distinct ids. */
const eventDoc = (n: number, projectId = 1): EventDocument => ({
  project_id: projectId,
  uuid: `0190a000-0000-7000-8000-0000000000${String(n).padStart(2, '0')}`,
  event: n % 2 ? 'odd' : 'even',
  distinct_id: `d${n % 3}`,
  properties: { n },
  timestamp: new Date(BASE + Math.floor(n / 2) * 1000),
  created_at: new Date(BASE),
  person_mode: 'full',
})

describe('sink-mongo StoredEvents (the events service)', () => {
  let client: MongoClient
  let db: Db
  let events: StoredEvents
  before(async () => {
    client = await new MongoClient(await testMongoUrl()).connect()
    db = client.db(testDbName('stored_events'))
    const collection = db.collection<EventDocument>('custom_events')
    await collection.insertMany([...Array.from({ length: 8 }, (_, n) => eventDoc(n)), eventDoc(3, 2)])
    events = new StoredEvents(collection)
  })
  after(async () => {
    await db.dropDatabase().catch(() => undefined)
    await client.close()
  })
  const numbers = (docs: EventDocument[]) => docs.map((doc) => doc.properties.n)

  it("reads one project's events newest first, then by uuid descending, as stored", async () => {
    const page = await events.page(1, { limit: 100 })
    expect(numbers(page)).to.deep.equal([7, 6, 5, 4, 3, 2, 1, 0])
    expect(page[0]).to.deep.equal(eventDoc(7))
    expect(numbers(await events.page(2, { limit: 100 }))).to.deep.equal([3])
  })

  it('narrows by time, name and distinct id, and continues below the last event of a page', async () => {
    const at = (second: number) => new Date(BASE + second * 1000)
    expect(numbers(await events.page(1, { limit: 100, after: at(1), before: at(3) }))).to.deep.equal([5, 4])
    expect(numbers(await events.page(1, { limit: 100, event: 'odd', distinctId: 'd1' }))).to.deep.equal([7, 1])
    const first = await events.page(1, { limit: 3 })
    const last = first[first.length - 1]!
    const rest = await events.page(1, { limit: 100, below: { timestamp: last.timestamp, uuid: last.uuid } })
    expect(numbers([...first, ...rest])).to.deep.equal([7, 6, 5, 4, 3, 2, 1, 0])
  })
})
