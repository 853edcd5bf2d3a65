import { expect } from 'chai'
import { fromWire } from '../../core/event.ts'

describe('event', () => {
  it('makes the first form of a wire event, with top-level $set merged over properties.$set', () => {
    const event = fromWire(
      {
        event: 'e',
        distinct_id: 7,
        properties: { a: 1, $set: { x: 1, y: 1 } },
        $set: { y: 2 },
        timestamp: '2026-01-01T00:00:01.000Z',
      },
      { receivedAt: new Date('2026-01-01T00:00:02.000Z') },
    )
    expect(event).to.deep.equal({
      uuid: '',
      event: 'e',
      distinctId: '7',
      properties: { a: 1, $set: { x: 1, y: 2 } },
      timestamp: new Date('2026-01-01T00:00:01.000Z'),
    })
  })

  it('stores a uuid in lower case, whatever case the client sent it in', () => {
    const event = fromWire(
      { event: 'e', distinct_id: 'd', uuid: '0190A000-0000-7000-8000-0000000000AB' },
      { receivedAt: new Date() },
    )
    expect(event.uuid).to.equal('0190a000-0000-7000-8000-0000000000ab')
  })
})
