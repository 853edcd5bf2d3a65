import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import { calculateObjectSize } from 'bson'
import { pino } from 'pino'
import {
  MAX_DETAIL_VALUE_CHARS,
  MAX_EVENT_EXCERPT_CHARS,
  WarningBatch,
  boundedDetails,
  eventExcerpt,
} from '../../core/warnings.ts'
import { COLLECTIONS } from '../../core/model/collections.ts'
import { testDbName, testMongoUrl } from '../helpers/mongo.ts'

const manyGroupTypes = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`type_${i}`, 'key']))

describe('ingestion warnings', () => {
  let client: MongoClient
  let db: Db
  before(async () => {
    client = await new MongoClient(await testMongoUrl()).connect()
    db = client.db(testDbName('warnings'))
  })
  after(async () => {
    await db.dropDatabase()
    await client.close()
  })

  it('keeps a small event whole, and small details as they are', () => {
    const event = { event: 'e', distinct_id: 'd', properties: { a: 1 } }
    expect(eventExcerpt(event)).to.equal(event)
    const details = { group_type: 'sixth', max_group_types: 5 }
    expect(boundedDetails(details)).to.equal(details)
  })

  it('keeps an excerpt of a large event: the start of its JSON, its name and uuid, marked truncated', () => {
    const event = {
      event: '$pageview',
      uuid: '0190a000-0000-7000-8000-0000000000ab',
      distinct_id: 'd',
      properties: { $groups: manyGroupTypes(20_000) },
    }
    const excerpt = eventExcerpt(event) as Record<string, unknown>
    expect(excerpt).to.include({ truncated: true, event: '$pageview', uuid: '0190a000-0000-7000-8000-0000000000ab' })
    expect(excerpt.excerpt).to.be.a('string').with.length(MAX_EVENT_EXCERPT_CHARS)
    expect(JSON.stringify(event).startsWith(excerpt.excerpt as string)).to.equal(true)
  })

  it('cuts every value of oversized details, and says so', () => {
    const huge = 'x'.repeat(5 * 1024 * 1024)
    const details = boundedDetails({ uuid: huge, value: { nested: [huge] }, max: 5 })
    expect(details).to.deep.equal({
      uuid: 'x'.repeat(MAX_DETAIL_VALUE_CHARS),
      value: { truncated: true, excerpt: `{"nested":["${'x'.repeat(MAX_DETAIL_VALUE_CHARS - 12)}` },
      max: 5,
      truncated: true,
    })
  })

  it('stores a few KB per warning however large the event, for every warning of that event', async () => {
    const batch = new WarningBatch(7)
    const event = {
      event: 'e',
      distinct_id: 'd',
      properties: { $groups: manyGroupTypes(20_000), $anon_distinct_id: 'a'.repeat(5 * 1024 * 1024) },
    }
    expect(JSON.stringify(event).length).to.be.greaterThan(5 * 1024 * 1024)
    for (let i = 0; i < 3; i++) batch.add('some_problem', { attempt: i, id: event.properties.$anon_distinct_id }, event)
    await batch.flush(db, pino({ level: 'silent' }))
    const stored = await db.collection(COLLECTIONS.ingestionWarnings).find({ project_id: 7 }).toArray()
    expect(stored).to.have.length(3)
    for (const warning of stored) {
      expect(calculateObjectSize(warning)).to.be.lessThan(8 * 1024)
      expect(warning.event).to.include({ truncated: true, event: 'e' })
      expect(warning.details).to.include({ truncated: true })
    }
  })
})
