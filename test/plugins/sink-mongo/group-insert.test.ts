import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import type { Collection, CommandStartedEvent, Db } from 'mongodb'
import { GroupInsert } from '../../../plugins/sink-mongo/group-insert.ts'
import type { EventDocument } from '../../../core/plugin-api.ts'
import { HttpError } from '../../../core/errors.ts'
import { monitoredClient, testDbName, testMongoUrl } from '../../helpers/mongo.ts'

const eventDoc = (uuid: string, extra: Record<string, unknown> = {}) =>
  ({
    project_id: 1,
    uuid,
    event: '$pageview',
    distinct_id: 'd',
    properties: {},
    timestamp: new Date(),
    ...extra,
  }) as unknown as EventDocument

describe('GroupInsert', () => {
  let client: MongoClient
  let db: Db
  let collection: Collection<EventDocument>
  const inserts: CommandStartedEvent[] = []
  before(async () => {
    client = await monitoredClient((event) => event.commandName === 'insert' && inserts.push(event))
    db = client.db(testDbName('group_insert'))
    collection = db.collection<EventDocument>('events')
    await collection.createIndex({ project_id: 1, uuid: 1 }, { unique: true })
  })
  after(async () => {
    await db.dropDatabase().catch(() => undefined)
    await client.close()
  })
  beforeEach(async () => {
    inserts.length = 0
    await collection.deleteMany({})
  })

  it('stores the events of 32 concurrent requests with one insert command', async () => {
    const group = new GroupInsert(collection, { w: 1 })
    await Promise.all(Array.from({ length: 32 }, (_, i) => group.insert([eventDoc(`a-${i}`), eventDoc(`b-${i}`)])))
    expect(inserts).to.have.length(1)
    expect(await collection.countDocuments()).to.equal(64)
  })

  it('sends the requests that arrive while an insert is in flight together, once it has ended', async () => {
    const group = new GroupInsert(collection, { w: 1 })
    // a large first insert stays in flight while the later requests arrive, each on its own turn
    const first = group.insert(Array.from({ length: 3_000 }, (_, i) => eventDoc(`first-${i}`)))
    const later: Promise<void>[] = []
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setImmediate(resolve))
      later.push(group.insert([eventDoc(`later-${i}`)]))
    }
    await Promise.all([first, ...later])
    expect(inserts.map((event) => (event.command.documents as unknown[]).length)).to.deep.equal([3_000, 5])
    expect(await collection.countDocuments()).to.equal(3_005)
  })

  it("sends a group of a batch request's size without waiting for the insert in flight", async () => {
    await Promise.all([collection.findOne({}), collection.findOne({}), collection.findOne({})]) // pooled connections ready
    const group = new GroupInsert(collection, { w: 1 })
    let startedWhenFirstEnded = 0
    const first = group
      .insert(Array.from({ length: 3_000 }, (_, i) => eventDoc(`first-${i}`)))
      .then(() => (startedWhenFirstEnded = inserts.length))
    await new Promise((resolve) => setImmediate(resolve))
    const batch = group.insert(Array.from({ length: 100 }, (_, i) => eventDoc(`batch-${i}`)))
    await Promise.all([first, batch])
    expect(startedWhenFirstEnded).to.equal(2)
    expect(await collection.countDocuments()).to.equal(3_100)
  })

  it('treats an event stored before (an SDK retry) as stored, next to new events of other requests', async () => {
    const group = new GroupInsert(collection, { w: 1 })
    await group.insert([eventDoc('retried')])
    const results = await Promise.allSettled([
      group.insert([eventDoc('retried'), eventDoc('new-1')]),
      group.insert([eventDoc('new-2')]),
    ])
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled'])
    expect(await collection.countDocuments()).to.equal(3)
  })

  it('fails only the request whose own event could not be stored', async () => {
    const group = new GroupInsert(collection, { w: 1 })
    const results = await Promise.allSettled([
      group.insert([eventDoc('ok-1')]),
      group.insert([eventDoc('bad', { _id: [1, 2] })]),
      group.insert([eventDoc('ok-2')]),
    ])
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled'])
    expect(inserts).to.have.length(1)
    expect(
      (
        await collection
          .find({}, { projection: { _id: 0, uuid: 1 } })
          .sort({ uuid: 1 })
          .toArray()
      ).map((d) => d.uuid),
    ).to.deep.equal(['ok-1', 'ok-2'])
  })

  it('fails only the request holding a document too large to store, with a 413, and stores the rest of its group', async () => {
    const group = new GroupInsert(collection, { w: 1 })
    // a $set stored twice, in properties and person_properties: 18 MiB, past the driver's 17 MiB buffer (a RangeError)
    const value = 'x'.repeat(9 * 1024 * 1024)
    const huge = eventDoc('huge', { properties: { $set: { value } }, person_properties: { value } })
    // just over 16 MiB: the driver's own check (an invalid-argument error)
    const over = eventDoc('over', { properties: { value: 'y'.repeat(16 * 1024 * 1024 - 100) } })
    const results = await Promise.allSettled([
      group.insert([eventDoc('ok-1')]),
      group.insert([eventDoc('ok-2'), huge]),
      group.insert([eventDoc('ok-3')]),
      group.insert([over]),
      group.insert([eventDoc('ok-4'), eventDoc('ok-5')]),
    ])
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'])
    for (const index of [1, 3]) {
      const error = (results[index] as PromiseRejectedResult).reason as HttpError
      expect(error).to.be.instanceOf(HttpError)
      expect(error.status).to.equal(413)
      expect(error.toBody()).to.include({ type: 'validation_error', code: 'event_too_large' })
      expect(error.detail).to.match(
        /^maximum event size exceeded: event (huge|over) would be stored as \d+ bytes .*at most 16777215 bytes per event$/,
      )
    }
    expect(
      (
        await collection
          .find({}, { projection: { _id: 0, uuid: 1 } })
          .sort({ uuid: 1 })
          .toArray()
      ).map((d) => d.uuid),
    ).to.deep.equal(['ok-1', 'ok-3', 'ok-4', 'ok-5'])
  })

  it('fails only the request whose document the driver cannot serialise, and stores the others of its group', async () => {
    const group = new GroupInsert(collection, { w: 1 })
    const circular: Record<string, unknown> = {}
    circular.self = circular
    const results = await Promise.allSettled([
      group.insert([eventDoc('ok-1')]),
      group.insert([eventDoc('bad', { properties: circular })]),
      group.insert([eventDoc('ok-2')]),
    ])
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason).to.not.be.instanceOf(HttpError)
    expect(
      (
        await collection
          .find({}, { projection: { _id: 0, uuid: 1 } })
          .sort({ uuid: 1 })
          .toArray()
      ).map((d) => d.uuid),
    ).to.deep.equal(['ok-1', 'ok-2'])
  })

  it('fails every request of a group when the command as a whole fails', async () => {
    const closed = new MongoClient(await testMongoUrl(), { serverSelectionTimeoutMS: 200 })
    const group = new GroupInsert(closed.db(db.databaseName).collection<EventDocument>('events'), { w: 1 })
    await closed.close()
    const results = await Promise.allSettled([group.insert([eventDoc('x-1')]), group.insert([eventDoc('x-2')])])
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected'])
  })
})
