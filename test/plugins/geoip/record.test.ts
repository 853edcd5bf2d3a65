import { expect } from 'chai'
import { toGeoLocation } from '../../../plugins/geoip/record.ts'
import { LONDON, UNITED_STATES } from './fixtures.ts'

describe('geoip record', () => {
  it('reads every key of a MaxMind GeoIP2 City record, with English names and numbered subdivisions', () => {
    expect(toGeoLocation(LONDON)).to.deep.equal({
      city_name: 'London',
      subdivision_2_name: 'Greater London',
      subdivision_2_code: 'LND',
      subdivision_1_name: 'England',
      subdivision_1_code: 'ENG',
      country_name: 'United Kingdom',
      country_code: 'GB',
      continent_name: 'Europe',
      continent_code: 'EU',
      postal_code: 'EC2V',
      latitude: 51.5142,
      longitude: -0.0931,
      accuracy_radius: 10,
      time_zone: 'Europe/London',
    })
  })

  it('leaves out what a MaxMind record does not have', () => {
    expect(toGeoLocation(UNITED_STATES)).to.have.all.keys(
      'country_name',
      'country_code',
      'continent_name',
      'continent_code',
      'latitude',
      'longitude',
      'accuracy_radius',
      'time_zone',
    )
  })

  it('reads the flat ip-location-db layout, deriving names and continent from the country code', () => {
    const record = {
      city: 'Mountain View',
      country_code: 'US',
      latitude: 37.422000885009766,
      longitude: -122.08499908447266,
      postcode: '',
      state1: 'California',
      state2: '',
      timezone: '',
    }
    expect(toGeoLocation(record)).to.deep.equal({
      city_name: 'Mountain View',
      subdivision_1_name: 'California',
      country_name: 'United States',
      country_code: 'US',
      continent_name: 'North America',
      continent_code: 'NA',
      latitude: 37.422,
      longitude: -122.085,
    })
  })

  it('keeps flat postal codes, second subdivisions and time zones when the database has them', () => {
    const record = {
      city: 'Berlin',
      country_code: 'DE',
      postcode: '10115',
      state1: 'Berlin',
      state2: 'Mitte',
      timezone: 'Europe/Berlin',
      latitude: 52.52,
      longitude: 13.405,
    }
    expect(toGeoLocation(record)).to.include({
      postal_code: '10115',
      subdivision_2_name: 'Mitte',
      time_zone: 'Europe/Berlin',
      continent_code: 'EU',
      latitude: 52.52,
    })
  })

  it('drops an unknown country code but keeps what else is known', () => {
    expect(toGeoLocation({ country_code: 'ZZ', city: 'Somewhere' })).to.deep.equal({ city_name: 'Somewhere' })
  })

  it('finds nothing in empty, non-object or unrelated records', () => {
    for (const record of [null, undefined, 'GB', [], {}, { country_code: '' }, { country: { names: {} } }])
      expect(toGeoLocation(record), JSON.stringify(record)).to.equal(undefined)
  })
})
