/**
 * alias-resolve: gives every event a person (creating one for a new distinct_id), applies
 * `$identify` / `$create_alias` / `$merge_dangerously` merges, attributes personless events, and
 * provides the `persons` service that person-update writes through. See README.md.
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import { PersonStore, ensurePersonIndexes } from './person-store.ts'
import { resolveEvent } from './resolve.ts'
import { mountPersonRoute } from './route.ts'

export const optionsSchema = Type.Object(
  {
    /** A personless event of a person older than `forceUpgradeAfterSeconds` carries its properties (capture.md §2.3). */
    forceUpgrade: Type.Boolean({ default: true }),
    forceUpgradeAfterSeconds: Type.Number({ minimum: 0, default: 60 }),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'alias-resolve',
  apiVersion: API_VERSION,
  optionsSchema,
  async setup(api, options) {
    await ensurePersonIndexes(api.db)
    const store = new PersonStore(api.db)
    api.provide('persons', store)
    const resolveOptions = {
      forceUpgrade: options.forceUpgrade,
      forceUpgradeAfterMs: options.forceUpgradeAfterSeconds * 1000,
    }
    api.hooks.aliasResolve.tapPromise({ name: api.id }, async function resolvePerson(event, ctx) {
      return resolveEvent(store, event, ctx, resolveOptions)
    })
    api.hooks.routes.tap({ name: api.id }, (router) => mountPersonRoute(router, api.db))
  },
})
