/**
 * Turns one database record into PostHog's geoip keys (capture.md §2.10). Two record layouts are
 * read: MaxMind's GeoIP2/GeoLite2 City (nested objects with localised `names`, also used by DB-IP's
 * own downloads) and the flat layout of the ip-location-db packages (`country_code`, `state1`,
 * `city`, ...), which only has codes, so names and continents are derived from the country code.
 */
import type { GeoLocation, GeoipKey } from '../../core/plugin-api.ts'
import { countryInfo } from './countries.ts'

/** The 15 keys PostHog's GeoIP transformation writes, in its order. */
export const GEOIP_KEYS = [
  'city_name',
  'city_confidence',
  'subdivision_2_name',
  'subdivision_2_code',
  'subdivision_1_name',
  'subdivision_1_code',
  'country_name',
  'country_code',
  'continent_name',
  'continent_code',
  'postal_code',
  'latitude',
  'longitude',
  'accuracy_radius',
  'time_zone',
] as const satisfies readonly GeoipKey[]

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined)
const englishName = (v: unknown): string | undefined =>
  isObject(v) && isObject(v.names) ? text(v.names.en) : undefined

/**
 * Flat databases store coordinates as float32, so 37.422 reads back as 37.422000885009766; seven
 * significant digits give the decimal the database was built from. Doubles are kept as they are.
 */
function coordinate(v: unknown): number | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v)) return undefined
  return Math.fround(v) === v ? Number(v.toPrecision(7)) : v
}

function fromMaxMind(record: Json): GeoLocation {
  const location = isObject(record.location) ? record.location : {}
  const postal = isObject(record.postal) ? record.postal : {}
  const country = isObject(record.country) ? record.country : {}
  const continent = isObject(record.continent) ? record.continent : {}
  const subdivisions = Array.isArray(record.subdivisions) ? record.subdivisions.filter(isObject) : []
  return {
    city_name: englishName(record.city),
    subdivision_1_name: englishName(subdivisions[0]),
    subdivision_1_code: text(subdivisions[0]?.iso_code),
    subdivision_2_name: englishName(subdivisions[1]),
    subdivision_2_code: text(subdivisions[1]?.iso_code),
    country_name: englishName(country),
    country_code: text(country.iso_code),
    continent_name: englishName(continent),
    continent_code: text(continent.code),
    postal_code: text(postal.code),
    latitude: coordinate(location.latitude),
    longitude: coordinate(location.longitude),
    accuracy_radius: typeof location.accuracy_radius === 'number' ? location.accuracy_radius : undefined,
    time_zone: text(location.time_zone),
  }
}

function fromFlat(record: Json): GeoLocation {
  const countryCode = text(record.country_code)?.toUpperCase()
  const info = countryCode ? countryInfo(countryCode) : {}
  return {
    city_name: text(record.city),
    subdivision_1_name: text(record.state1),
    subdivision_2_name: text(record.state2),
    country_name: info.countryName,
    // `ZZ` and other non-country codes mean "unknown" in these databases
    country_code: info.continentCode ? countryCode : undefined,
    continent_name: info.continentName,
    continent_code: info.continentCode,
    postal_code: text(record.postcode),
    latitude: coordinate(record.latitude),
    longitude: coordinate(record.longitude),
    time_zone: text(record.timezone),
  }
}

/** The keys found in `record`, or undefined when it locates nothing. */
export function toGeoLocation(record: unknown): GeoLocation | undefined {
  if (!isObject(record)) return undefined
  const isFlat = 'country_code' in record || 'state1' in record || typeof record.city === 'string'
  const mapped = isFlat ? fromFlat(record) : fromMaxMind(record)
  const found: GeoLocation = {}
  for (const key of GEOIP_KEYS) if (mapped[key] !== undefined) found[key] = mapped[key]
  return Object.keys(found).length ? found : undefined
}

/** `$geoip_<key>` for each key found: the event properties, and what decide evaluates flags with. */
export function geoipProperties(location: GeoLocation): Record<string, string | number> {
  const properties: Record<string, string | number> = {}
  for (const key of GEOIP_KEYS) {
    const value = location[key]
    if (value !== undefined) properties[`$geoip_${key}`] = value
  }
  return properties
}
