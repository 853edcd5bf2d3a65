import { expect } from 'chai'
import {
  decodeQueuedEvent,
  encodeQueuedEvent,
  partitionFilter,
  partitionOf,
  requestKey,
  subjectOf,
} from '../../../core/queue/message.ts'

describe('queue messages', () => {
  const queued = {
    projectId: 7,
    receivedAt: new Date('2026-11-22T10:00:00.123Z'),
    sentAt: new Date('2026-11-22T09:59:59Z'),
    ip: '203.0.113.9',
    historicalMigration: true,
    event: {
      event: 'e',
      distinct_id: 'u-1',
      uuid: '0192d0a5-7c00-7000-8000-000000000001',
      properties: { a: [1, { b: null }] },
    },
  }

  it('round-trips every field of a queued event', () => {
    expect(decodeQueuedEvent(encodeQueuedEvent(queued))).to.deep.equal(queued)
  })

  it('leaves out what the request did not carry', () => {
    const bare = { projectId: 1, receivedAt: new Date(0), historicalMigration: false, event: { event: 'x' } }
    const text = encodeQueuedEvent(bare)
    expect(JSON.parse(text)).to.deep.equal({ p: 1, r: 0, e: { event: 'x' } })
    expect(decodeQueuedEvent(text)).to.deep.equal({ ...bare, sentAt: undefined, ip: undefined })
  })

  it('refuses a message that is not a queued event', () => {
    for (const text of ['{', '[]', '{"p":"1","r":0,"e":{}}', '{"p":1,"r":0,"e":[]}', '{"p":1.5,"r":0,"e":{}}']) {
      expect(() => decodeQueuedEvent(text), text).to.throw()
    }
  })

  it('puts every event of one distinct_id in one partition, however the id is spelled on the wire', () => {
    const a = partitionOf({ distinct_id: 'user-42' }, 16)
    expect(partitionOf({ $distinct_id: 'user-42' }, 16)).to.equal(a)
    expect(partitionOf({ properties: { distinct_id: 'user-42' } }, 16)).to.equal(a)
    expect(partitionOf({ distinct_id: 42 }, 16)).to.equal(partitionOf({ distinct_id: '42' }, 16))
  })

  it('spreads distinct_ids over the partitions', () => {
    const counts = new Array(16).fill(0)
    for (let i = 0; i < 16_000; i++) counts[partitionOf({ distinct_id: `user-${i}` }, 16)]++
    expect(Math.min(...counts)).to.be.above(800)
    expect(Math.max(...counts)).to.be.below(1200)
  })

  it('keys events of one request alike and of different requests apart', () => {
    const other = { ...queued, event: { event: 'f' } }
    expect(requestKey(other)).to.equal(requestKey(queued))
    expect(requestKey({ ...queued, receivedAt: new Date(1) })).to.not.equal(requestKey(queued))
    expect(requestKey({ ...queued, ip: undefined })).to.not.equal(requestKey(queued))
  })

  it('names subjects per project and partition, and filters a partition across projects', () => {
    expect(subjectOf('hedgerow.ingest', 3, 11)).to.equal('hedgerow.ingest.3.11')
    expect(partitionFilter('hedgerow.ingest', 11)).to.equal('hedgerow.ingest.*.11')
  })
})
