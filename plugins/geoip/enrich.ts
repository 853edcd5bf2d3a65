/**
 * The geoip step (capture.md §2.10): the event gets `$geoip_*` for what was found; the person gets
 * every key through the event's own `$set` (null when not found, so stale values are cleared) and
 * `$initial_geoip_*` through `$set_once`, which the person steps apply later.
 */
import type { EventContext, GeoLocation, GeoipLookup, IngestEvent } from '../../core/plugin-api.ts'
import { GEOIP_KEYS, geoipProperties } from './record.ts'
import { copyRecord } from '../../core/plugin-api.ts'

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The person updates: all 15 keys, null where the lookup found nothing. */
export function personGeoipUpdates(location: GeoLocation): { $set: Json; $set_once: Json } {
  const $set: Json = {}
  const $set_once: Json = {}
  for (const key of GEOIP_KEYS) {
    $set[`$geoip_${key}`] = location[key] ?? null
    $set_once[`$initial_geoip_${key}`] = location[key] ?? null
  }
  return { $set, $set_once }
}

/** `properties.$ip` when the client (or validate) set one, else the request's address. */
export function clientIp(event: IngestEvent, ctx: EventContext): string | undefined {
  const ip = event.properties.$ip
  if (typeof ip === 'string' && ip !== '') return ip
  return ip === undefined || ip === null || ip === '' ? ctx.ip : undefined
}

/** The enriched event, or undefined to keep it as it is (disabled, no address, nothing found). */
export function enrichEvent(event: IngestEvent, ctx: EventContext, reader: GeoipLookup): IngestEvent | undefined {
  if (event.properties.$geoip_disable) return undefined
  const ip = clientIp(event, ctx)
  const location = ip === undefined ? undefined : reader.lookup(ip)
  if (!location) return undefined
  const properties: Json = copyRecord(event.properties)
  Object.assign(properties, geoipProperties(location)) // $geoip_* keys: ours, never __proto__
  // a personless event's $set is discarded anyway (capture.md §2.3); do not add one
  if (!event.personless) {
    const person = personGeoipUpdates(location)
    properties.$set = Object.assign(isObject(properties.$set) ? copyRecord(properties.$set) : {}, person.$set)
    properties.$set_once = Object.assign(
      isObject(properties.$set_once) ? copyRecord(properties.$set_once) : {},
      person.$set_once,
    )
  }
  return { ...event, properties }
}
