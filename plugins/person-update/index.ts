/**
 * person-update: applies `$set`, `$set_once` and `$unset` (with PostHog's `$initial_*` and UTM
 * normalisation) to the person alias-resolve attributed the event to. See README.md.
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import { creationProperties, updateEvent } from './update.ts'

export const optionsSchema = Type.Object(
  {
    /** Don't write a person when only fast-changing keys ($current_url, $browser, …) changed, as PostHog does. */
    skipFilteredWrites: Type.Boolean({ default: true }),
    /** `$set_once` fills a stored null (PostHog's newest rule); false keeps a stored null forever. */
    setOnceFillsNull: Type.Boolean({ default: true }),
    /** `$set`, `$set_once` and `$unset` are each applied with their first this-many keys; more is warned about. */
    maxKeysPerOperation: Type.Integer({ minimum: 1, default: 1000 }),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'person-update',
  apiVersion: API_VERSION,
  optionsSchema,
  requires: ['persons'],
  setup(api, options) {
    const store = api.use('persons')
    store.creationProperties = (event, created) => creationProperties(event, created, options)
    api.hooks.personUpdate.tapPromise({ name: api.id }, async function updatePerson(event, ctx) {
      return updateEvent(store, event, ctx, options)
    })
  },
})
