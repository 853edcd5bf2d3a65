/**
 * persons: every person write and read of the service, as one plugin with two steps from one
 * setup. The aliasResolve step gives every event a person (creating one for a new distinct_id),
 * applies `$identify` / `$create_alias` / `$merge_dangerously` merges and attributes personless
 * events; the personUpdate step applies `$set`, `$set_once` and `$unset` to that person. Both
 * share one store. Provides the contract's `persons` service (how decide reads persons) and mounts
 * the admin routes of a person and of the person search (search.ts). These were two plugins, `alias-resolve` and `person-update`, that
 * shared this store; the loader still accepts those names (core/plugin-renames.ts). See README.md.
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import type { StoredPerson } from '../../core/plugin-api.ts'
import { PERSON_COLLECTIONS, PersonStore, ensurePersonIndexes } from './person-store.ts'
import { PersonsReader, personKey } from './persons-reader.ts'
import { ensureSearchIndexes } from './search.ts'
import { resolveEvent } from './resolve.ts'
import { mountPersonRoute } from './route.ts'
import { creationProperties, updateEvent } from './update.ts'

export const optionsSchema = Type.Object(
  {
    /** A personless event of a person older than `forceUpgradeAfterSeconds` carries its properties (capture.md §2.3). */
    forceUpgrade: Type.Boolean({ default: true }),
    forceUpgradeAfterSeconds: Type.Number({ minimum: 0, default: 60 }),
    /** Apply `$set` / `$set_once` / `$unset`; false resolves and merges persons only (the personUpdate step is not tapped). */
    updateProperties: Type.Boolean({ default: true }),
    /** Don't write a person when only fast-changing keys ($current_url, $browser, …) changed, as PostHog does. */
    skipFilteredWrites: Type.Boolean({ default: true }),
    /** `$set_once` fills a stored null (PostHog's newest rule); false keeps a stored null forever. */
    setOnceFillsNull: Type.Boolean({ default: true }),
    /** `$set`, `$set_once` and `$unset` are each applied with their first this-many keys; more is warned about. */
    maxKeysPerOperation: Type.Integer({ minimum: 1, default: 1000 }),
    /**
     * The person properties the admin API's person search (and the console's) looks in, each
     * indexed on the persons collection at start. A property name, no dot, not starting with `$`.
     */
    /**
     * Persons that flags read, kept per process while a change stream of the persons collection
     * says they are unchanged (the contract's WatchedCache); 0 reads each request's person from the database.
     */
    cachedPersons: Type.Integer({ minimum: 0, default: 20_000 }),
    searchableProperties: Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^$.][^.]*$' }), {
      maxItems: 20,
      uniqueItems: true,
      default: ['email', 'name'],
    }),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'persons',
  apiVersion: API_VERSION,
  optionsSchema,
  async setup(api, options) {
    await ensurePersonIndexes(api.db)
    await ensureSearchIndexes(api.db, options.searchableProperties)
    const update = {
      skipFilteredWrites: options.skipFilteredWrites,
      setOnceFillsNull: options.setOnceFillsNull,
      maxKeysPerOperation: options.maxKeysPerOperation,
    }
    const cache =
      options.cachedPersons > 0
        ? api.batching.watchedCache<StoredPerson>(api.db.collection(PERSON_COLLECTIONS.persons), {
            limit: options.cachedPersons,
            onUnavailable: (error) =>
              api.logger.info(
                { reason: error.message },
                'persons read by flags are not cached: the persons collection has no change stream (a standalone MongoDB?)',
              ),
          })
        : undefined
    const store = new PersonStore(
      api.db,
      api.batching,
      options.updateProperties ? (event, created) => creationProperties(event, created, update) : undefined,
      cache && ((projectId, id) => cache.changed(personKey(projectId, id))),
    )
    api.provide('persons', new PersonsReader(api.db, api.batching, { cache }))
    const resolveOptions = {
      forceUpgrade: options.forceUpgrade,
      forceUpgradeAfterMs: options.forceUpgradeAfterSeconds * 1000,
    }
    api.hooks.aliasResolve.tapPromise({ name: api.id }, async function resolvePerson(event, ctx) {
      return resolveEvent(store, event, ctx, resolveOptions)
    })
    if (options.updateProperties)
      api.hooks.personUpdate.tapPromise({ name: api.id }, async function updatePerson(event, ctx) {
        return updateEvent(store, event, ctx, update)
      })
    api.hooks.routes.tap({ name: api.id }, (router) =>
      mountPersonRoute(router, api.db, api.http, options.searchableProperties),
    )
    return () => cache?.close()
  },
})
