import { expect } from 'chai'
import { parseCaptureRequest } from '../../../core/capture/request.ts'
import { thrownBy } from './http-error-helpers.ts'

const KEY = 'phc_testprojectkey123'
const LIMIT = 1_000_000
const parse = (body: unknown, maxEventBytes = LIMIT) =>
  parseCaptureRequest(JSON.stringify(body), { path: '/batch/', query: {}, maxEventBytes })
const event = (uuid: string, properties: Record<string, unknown> = {}) => ({
  event: 'e',
  distinct_id: 'd',
  uuid,
  properties,
})

describe('event size limit (capture)', () => {
  it('answers 413 naming the event, its size and the limit, when one event of a batch is over it', () => {
    const big = event('0190f0f0-0000-7000-8000-00000000000b', { $set: { blob: 'x'.repeat(LIMIT) } })
    const error = thrownBy(() => parse({ api_key: KEY, batch: [event('a'), big, event('c')] }))
    const bytes = Buffer.byteLength(JSON.stringify(big))
    expect(error.status).to.equal(413)
    expect(error.toBody()).to.deep.equal({
      type: 'validation_error',
      code: 'event_too_large',
      detail: `maximum event size exceeded: event 1 of the request (uuid 0190f0f0-0000-7000-8000-00000000000b) takes ${bytes} bytes as JSON; one event may take at most ${LIMIT} bytes (server.eventLimitBytes)`,
      attr: null,
    })
  })

  it('accepts a body larger than the limit whose events each fit', () => {
    const batch = Array.from({ length: 5 }, (_, i) => event(`e${i}`, { blob: 'x'.repeat(LIMIT / 2) }))
    expect(parse({ api_key: KEY, batch }).events).to.have.length(5)
  })

  it('counts UTF-8 bytes, not characters', () => {
    const twoByteChars = 'é'.repeat(600_000) // 1.2 MB, in 600,000 characters
    expect(thrownBy(() => parse({ api_key: KEY, batch: [event('a', { text: twoByteChars })] })).status).to.equal(413)
    expect(parse({ api_key: KEY, batch: [event('a', { text: 'é'.repeat(400_000) })] }).events).to.have.length(1)
  })

  it('measures the event as it is written again, so a short body that grows past the limit is caught', () => {
    // 1e20 is 4 characters in the body and 21 digits once the service writes it
    const text = `{"api_key":"${KEY}","batch":[{"event":"e","distinct_id":"d","properties":{"n":[${Array(300).fill('1e20').join(',')}]}}]}`
    expect(text.length).to.be.lessThan(2_000)
    const error = thrownBy(() => parseCaptureRequest(text, { path: '/batch/', query: {}, maxEventBytes: 4_000 }))
    expect(error.status).to.equal(413)
    expect(error.detail).to.match(/event 0 of the request takes \d{4} bytes as JSON/)
  })

  it('echoes no uuid that is not a short string', () => {
    const error = thrownBy(() =>
      parse({ api_key: KEY, batch: [event('u'.repeat(1_000), { blob: 'x'.repeat(LIMIT) })] }),
    )
    expect(error.detail).to.match(/^maximum event size exceeded: event 0 of the request takes/)
  })
})
