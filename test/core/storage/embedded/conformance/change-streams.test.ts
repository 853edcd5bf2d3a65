import { expect } from 'chai'
import type { ChangeStream, ChangeStreamDocument, Document, ResumeToken } from 'mongodb'
import { isReplicaSet, useTestDb, type Loose } from './fixture.ts'

async function nextEvents(stream: ChangeStream<Loose>, count: number): Promise<ChangeStreamDocument<Loose>[]> {
  const out: ChangeStreamDocument<Loose>[] = []
  while (out.length < count) out.push(await stream.next())
  return out
}

/** Change streams need a replica set: skipped against a standalone server. */
describe('MongoDB conformance: change streams', () => {
  const t = useTestDb('changes')
  const coll = () => t.db.collection<Loose>('flags')

  before(async function () {
    if (!(await isReplicaSet(t.db))) this.skip()
    await t.db.createCollection('flags')
  })

  it('reports inserts, updates, replaces and deletes in order', async () => {
    const stream = coll().watch([], { fullDocument: 'updateLookup', maxAwaitTimeMS: 50 })
    try {
      await stream.tryNext()
      await coll().insertOne({ _id: 1, key: 'beta', active: false })
      await coll().updateOne({ _id: 1 }, { $set: { active: true } })
      await coll().replaceOne({ _id: 1 }, { key: 'beta', active: false, rollout: 50 })
      await coll().deleteOne({ _id: 1 })
      const events = await nextEvents(stream, 4)
      expect(events.map((e) => e.operationType)).to.deep.equal(['insert', 'update', 'replace', 'delete'])
      const [insert, update, replace, remove] = events as unknown as [Document, Document, Document, Document]
      expect(insert.fullDocument).to.deep.equal({ _id: 1, key: 'beta', active: false })
      expect(insert.ns).to.deep.equal({ db: t.db.databaseName, coll: 'flags' })
      expect(update.updateDescription.updatedFields).to.deep.equal({ active: true })
      expect(update.fullDocument).to.deep.equal({ _id: 1, key: 'beta', active: true })
      expect(replace.fullDocument).to.deep.equal({ _id: 1, key: 'beta', active: false, rollout: 50 })
      expect(remove.documentKey).to.deep.equal({ _id: 1 })
    } finally {
      await stream.close()
    }
  })

  it('filters events with a pipeline and only sees its own collection', async () => {
    const stream = coll().watch([{ $match: { operationType: 'insert', 'fullDocument.key': 'wanted' } }], {
      maxAwaitTimeMS: 50,
    })
    try {
      await stream.tryNext()
      await t.db.collection<Loose>('other').insertOne({ key: 'wanted' })
      await coll().insertMany([{ key: 'ignored' }, { key: 'wanted' }])
      const [event] = await nextEvents(stream, 1)
      expect((event as Document).fullDocument.key).to.equal('wanted')
    } finally {
      await stream.close()
    }
  })

  it('resumes after a token without missing or repeating events', async () => {
    let token: ResumeToken | undefined
    const first = coll().watch([], { maxAwaitTimeMS: 50 })
    try {
      await first.tryNext()
      await coll().insertOne({ _id: 'r1' })
      const [event] = await nextEvents(first, 1)
      token = event._id
    } finally {
      await first.close()
    }
    await coll().insertOne({ _id: 'r2' })
    const resumed = coll().watch([], { resumeAfter: token, maxAwaitTimeMS: 50 })
    try {
      const [event] = await nextEvents(resumed, 1)
      expect((event as Document).documentKey).to.deep.equal({ _id: 'r2' })
    } finally {
      await resumed.close()
    }
  })
})
