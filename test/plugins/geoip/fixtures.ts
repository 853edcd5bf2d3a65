/** Test databases written at test time: MaxMind's GeoIP2 City layout, which no npm package ships. */
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { writeMmdb } from './mmdb-writer.ts'

const names = (en: string) => ({ en, de: `${en} (de)` })

/** A GeoLite2-City-shaped record with every field PostHog reads. */
export const LONDON = {
  city: { geoname_id: 2643743, names: names('London') },
  continent: { code: 'EU', geoname_id: 6255148, names: names('Europe') },
  country: { geoname_id: 2635167, iso_code: 'GB', names: names('United Kingdom') },
  location: { accuracy_radius: 10, latitude: 51.5142, longitude: -0.0931, time_zone: 'Europe/London' },
  postal: { code: 'EC2V' },
  registered_country: { geoname_id: 2635167, iso_code: 'GB', names: names('United Kingdom') },
  subdivisions: [
    { geoname_id: 6269131, iso_code: 'ENG', names: names('England') },
    { geoname_id: 2648110, iso_code: 'LND', names: names('Greater London') },
  ],
}

/** A country-level record: no city, no postal code, no subdivisions. */
export const UNITED_STATES = {
  continent: { code: 'NA', geoname_id: 6255149, names: names('North America') },
  country: { geoname_id: 6252001, iso_code: 'US', names: names('United States') },
  location: { accuracy_radius: 1000, latitude: 37.751, longitude: -97.822, time_zone: 'America/Chicago' },
}

/** Writes a GeoLite2-City-layout database (81.2.69.0/24 London, 2001:4860::/32 United States). */
export function writeMaxMindCityFixture(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-geoip-'))
  const file = path.join(dir, 'GeoLite2-City-Test.mmdb')
  writeFileSync(
    file,
    writeMmdb([
      ['81.2.69.0/24', LONDON],
      ['2001:4860::/32', UNITED_STATES],
    ]),
  )
  return file
}
