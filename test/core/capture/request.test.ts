import { expect } from 'chai'
import { parseCaptureRequest } from '../../../core/capture/request.ts'
import { thrownBy } from './http-error-helpers.ts'

const KEY = 'phc_testprojectkey123'
const on = (path: string, query: Record<string, string | undefined> = {}) => ({ path, query })
const parse = (body: unknown, path = '/e/', query: Record<string, string | undefined> = {}) =>
  parseCaptureRequest(JSON.stringify(body), on(path, query))

describe('parseCaptureRequest', () => {
  describe('shapes', () => {
    it('reads an array of events, taking the key from properties.token as posthog-js sends it', () => {
      const request = parse([
        { event: '$pageview', properties: { token: KEY, distinct_id: 'u1' } },
        { event: '$autocapture', properties: { token: KEY, distinct_id: 'u1' } },
      ])
      expect(request.token).to.equal(KEY)
      expect(request.events.map((event) => event.event)).to.deep.equal(['$pageview', '$autocapture'])
      expect(request.historicalMigration).to.equal(false)
    })

    it('reads a batch with api_key, sent_at and historical_migration', () => {
      const request = parse(
        {
          api_key: KEY,
          historical_migration: true,
          sent_at: '2026-11-22T15:49:19.772Z',
          batch: [{ event: 'a' }, { event: 'b' }],
        },
        '/batch/',
      )
      expect(request.token).to.equal(KEY)
      expect(request.events).to.have.length(2)
      expect(request.historicalMigration).to.equal(true)
      expect(request.sentAt?.toISOString()).to.equal('2026-11-22T15:49:19.772Z')
    })

    it('marks historical_migration only for the boolean true', () => {
      expect(parse({ token: KEY, historical_migration: 'true', batch: [{ event: 'a' }] }).historicalMigration).to.equal(
        false,
      )
      expect(parse({ token: KEY, historical_migration: false, batch: [{ event: 'a' }] }).historicalMigration).to.equal(
        false,
      )
    })

    it('reads a batch without a top-level key from its events', () => {
      expect(parse({ batch: [{ event: 'a', $token: KEY }] }).token).to.equal(KEY)
    })

    it('reads a single event object', () => {
      const request = parse({ event: 'signed up', distinct_id: 'u1', api_key: KEY })
      expect(request.token).to.equal(KEY)
      expect(request.events).to.deep.equal([{ event: 'signed up', distinct_id: 'u1', api_key: KEY }])
    })

    it('turns an engage object on /engage into $identify, keeping its fields', () => {
      const engage = { $token: KEY, $distinct_id: 'u1', $set: { plan: 'pro' }, properties: { a: 1 } }
      for (const path of ['/engage', '/engage/']) {
        expect(parse(engage, path).events).to.deep.equal([{ ...engage, event: '$identify' }])
      }
    })

    it('keeps a nameless object on other paths for the validate step to drop', () => {
      expect(parse({ token: KEY, distinct_id: 'u1' }, '/e/').events).to.deep.equal([{ token: KEY, distinct_id: 'u1' }])
    })

    it('keeps events without a distinct_id or with a bad uuid: those are per-event drops', () => {
      const request = parse({ api_key: KEY, batch: [{ event: 'a' }, { event: 'b', distinct_id: '', uuid: 'nope' }] })
      expect(request.events).to.have.length(2)
    })

    it('removes $performance_event events silently, even when nothing is left', () => {
      const mixed = parse({ api_key: KEY, batch: [{ event: '$performance_event' }, { event: 'kept' }] })
      expect(mixed.events.map((event) => event.event)).to.deep.equal(['kept'])
      const only = parse([{ event: '$performance_event', properties: { token: KEY } }])
      expect(only).to.deep.include({ token: KEY, events: [] })
    })
  })

  describe('refusals', () => {
    it('answers 400 invalid_json for text that is not JSON', () => {
      const error = thrownBy(() => parseCaptureRequest('{"event": ', on('/e/')))
      expect([error.status, error.code]).to.deep.equal([400, 'invalid_json'])
      expect(error.detail).to.match(/^failed to parse request: /)
    })

    for (const body of ['42', '"text"', 'null', 'true']) {
      it(`answers 400 invalid_payload for the JSON value ${body}`, () => {
        const error = thrownBy(() => parseCaptureRequest(body, on('/e/')))
        expect([error.status, error.code]).to.deep.equal([400, 'invalid_payload'])
      })
    }

    it('answers 400 invalid_payload naming the batch when batch is not an array', () => {
      const error = thrownBy(() => parse({ api_key: KEY, batch: { event: 'a' } }))
      expect([error.status, error.code, error.attr]).to.deep.equal([400, 'invalid_payload', 'batch'])
      expect(error.detail).to.equal('failed to parse request: /batch must be array')
    })

    it('answers 400 invalid_payload naming the element that is not an event object', () => {
      expect(thrownBy(() => parse([{ event: 'a' }, 'b'])).detail).to.equal('failed to parse request: /1 must be object')
      expect(thrownBy(() => parse({ api_key: KEY, batch: [[]] })).detail).to.equal(
        'failed to parse request: /batch/0 must be object',
      )
    })

    it('answers 400 no_events for an empty array or batch, before looking for a key', () => {
      for (const body of [[], { api_key: KEY, batch: [] }, { batch: [] }]) {
        const error = thrownBy(() => parse(body))
        expect([error.status, error.code, error.detail]).to.deep.equal([400, 'no_events', 'request holds no event'])
      }
    })

    it('answers 401 when the key is missing or malformed', () => {
      expect(thrownBy(() => parse([{ event: 'a' }])).code).to.equal('missing_api_key')
      expect(thrownBy(() => parse({ api_key: 'phx_personal', batch: [{ event: 'a' }] })).code).to.equal(
        'invalid_api_key',
      )
      expect(
        thrownBy(() =>
          parse([
            { event: 'a', token: 'k1' },
            { event: 'b', token: 'k2' },
          ]),
        ).code,
      ).to.equal('inconsistent_api_keys')
    })

    it('does not read the key from the query string', () => {
      const error = thrownBy(() => parse([{ event: 'a' }], '/e/', { token: KEY, api_key: KEY }))
      expect(error.code).to.equal('missing_api_key')
    })
  })

  describe('sentAt', () => {
    const events = [{ event: 'a', token: KEY }]

    it('takes the query sent_at or _ in milliseconds when the body has none', () => {
      expect(parse(events, '/e/', { sent_at: '1795362559928' }).sentAt?.getTime()).to.equal(1795362559928)
      expect(parse(events, '/e/', { _: '1795362559928' }).sentAt?.getTime()).to.equal(1795362559928)
    })

    it('ignores query values in a year up to 2020, which old SDKs sent in seconds', () => {
      expect(parse(events, '/e/', { _: '1795362559' }).sentAt).to.equal(undefined)
      expect(parse(events, '/e/', { sent_at: '1609459199999' }).sentAt).to.equal(undefined)
      expect(parse(events, '/e/', { sent_at: '1609459200000' }).sentAt?.toISOString()).to.equal(
        '2021-01-01T00:00:00.000Z',
      )
    })

    it('ignores query values that are not integers', () => {
      expect(parse(events, '/e/', { sent_at: '2026-11-22T15:49:19Z', _: '17e11' }).sentAt).to.equal(undefined)
    })

    it('prefers the batch body sent_at, and falls back to the query when it does not parse', () => {
      const query = { _: '1795362559928' }
      const good = parse({ api_key: KEY, sent_at: '2026-11-22T15:52:23.594205+00:00', batch: events }, '/batch', query)
      expect(good.sentAt?.toISOString()).to.equal('2026-11-22T15:52:23.594Z')
      const bad = parse({ api_key: KEY, sent_at: 'yesterday', batch: events }, '/batch', query)
      expect(bad.sentAt?.getTime()).to.equal(1795362559928)
    })

    it('reads no body sent_at from a single event', () => {
      expect(parse({ event: 'a', token: KEY, sent_at: '2026-11-22T15:49:19Z' }).sentAt).to.equal(undefined)
    })
  })
})
