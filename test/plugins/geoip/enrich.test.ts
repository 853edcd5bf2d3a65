import { expect } from 'chai'
import { enrichEvent, personGeoipUpdates } from '../../../plugins/geoip/enrich.ts'
import { GEOIP_KEYS, geoipProperties, openGeoip } from '../../../plugins/geoip/lookup.ts'
import type { GeoipReader } from '../../../plugins/geoip/lookup.ts'
import type { IngestEvent } from '../../../core/plugin-api.ts'
import { sampleContext } from '../../helpers/hooks.ts'
import { writeMaxMindCityFixture } from './fixtures.ts'

const event = (properties: Record<string, unknown>, over: Partial<IngestEvent> = {}): IngestEvent => ({
  uuid: '',
  event: 'pageview',
  distinctId: 'd',
  properties,
  timestamp: new Date(0),
  ...over,
})

describe('geoip enrich', () => {
  let geoip: GeoipReader
  before(async () => {
    geoip = await openGeoip({ databasePath: writeMaxMindCityFixture() })
  })
  after(() => geoip.close())

  it('adds $geoip_* for the keys found, and leaves the other properties as they were', () => {
    const enriched = enrichEvent(event({ $ip: '2001:4860::1', plan: 'pro' }), sampleContext(), geoip)
    expect(enriched?.properties).to.include({
      plan: 'pro',
      $geoip_country_code: 'US',
      $geoip_continent_name: 'North America',
      $geoip_time_zone: 'America/Chicago',
    })
    expect(enriched?.properties).not.to.have.any.keys(
      '$geoip_city_name',
      '$geoip_postal_code',
      '$geoip_city_confidence',
    )
  })

  it('sets all 15 keys on the person through $set, null when not found, and $initial_geoip_* through $set_once', () => {
    const properties = enrichEvent(event({ $ip: '2001:4860::1' }), sampleContext(), geoip)?.properties ?? {}
    const $set = properties.$set as Record<string, unknown>
    const $setOnce = properties.$set_once as Record<string, unknown>
    expect(Object.keys($set)).to.have.length(15)
    expect($set).to.include({
      $geoip_country_code: 'US',
      $geoip_city_name: null,
      $geoip_city_confidence: null,
      $geoip_subdivision_1_code: null,
    })
    expect(Object.keys($setOnce).sort()).to.deep.equal(GEOIP_KEYS.map((k) => `$initial_geoip_${k}`).sort())
    expect($setOnce).to.include({ $initial_geoip_country_code: 'US', $initial_geoip_postal_code: null })
  })

  it('keeps the client $set and $set_once, and overrides their $geoip_* keys as PostHog does', () => {
    const properties =
      enrichEvent(
        event({ $ip: '81.2.69.142', $set: { email: 'a@b.c', $geoip_city_name: 'Paris' }, $set_once: { first: 1 } }),
        sampleContext(),
        geoip,
      )?.properties ?? {}
    expect(properties.$set).to.include({ email: 'a@b.c', $geoip_city_name: 'London' })
    expect(properties.$set_once).to.include({ first: 1, $initial_geoip_city_name: 'London' })
  })

  it('does not change the event it was given', () => {
    const original = event({ $ip: '81.2.69.142', $set: { a: 1 } })
    enrichEvent(original, sampleContext(), geoip)
    expect(original.properties).to.deep.equal({ $ip: '81.2.69.142', $set: { a: 1 } })
  })

  it('falls back to the request address when the event has no $ip', () => {
    const enriched = enrichEvent(event({}), { ...sampleContext(), ip: '81.2.69.142' }, geoip)
    expect(enriched?.properties.$geoip_city_name).to.equal('London')
  })

  it('uses $ip over the request address', () => {
    const enriched = enrichEvent(event({ $ip: '2001:4860::1' }), { ...sampleContext(), ip: '81.2.69.142' }, geoip)
    expect(enriched?.properties.$geoip_country_code).to.equal('US')
  })

  it('skips events with $geoip_disable, private addresses, no address, or an address not in the database', () => {
    const ctx = sampleContext()
    expect(enrichEvent(event({ $ip: '81.2.69.142', $geoip_disable: true }), ctx, geoip)).to.equal(undefined)
    for (const $ip of ['10.0.0.1', '127.0.0.1', '::1', '192.168.0.1', 'fe80::1'])
      expect(enrichEvent(event({ $ip }), ctx, geoip), $ip).to.equal(undefined)
    expect(enrichEvent(event({}), ctx, geoip)).to.equal(undefined)
    expect(enrichEvent(event({ $ip: '8.8.8.8' }), ctx, geoip)).to.equal(undefined)
  })

  it('adds no $set or $set_once to a personless event, whose person updates are discarded anyway', () => {
    const enriched = enrichEvent(event({ $ip: '81.2.69.142' }, { personless: true }), sampleContext(), geoip)
    expect(enriched?.properties.$geoip_city_name).to.equal('London')
    expect(enriched?.properties).not.to.have.any.keys('$set', '$set_once')
  })

  it('builds the $geoip_* map decide evaluates flags with', () => {
    expect(geoipProperties({ country_code: 'GB', city_name: 'London' })).to.deep.equal({
      $geoip_city_name: 'London',
      $geoip_country_code: 'GB',
    })
    expect(personGeoipUpdates({}).$set).to.have.property('$geoip_time_zone', null)
  })
})
