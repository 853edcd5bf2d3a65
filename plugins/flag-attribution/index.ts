/**
 * flag-attribution: keeps `$feature/*` as sent and derives `$active_feature_flags`; checks
 * `$feature_flag_called` events and counts flag usage; optionally (off by default) evaluates the
 * project's flags for events that carry none, through the `flags` service of the decide plugin.
 * Failure policy (core): skip — an event without attribution beats a lost event.
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin, drop } from '../../core/plugin-api.ts'
import { attributionProperties, featureValues, withActiveFlags } from './attribution.ts'
import { ensureUsageIndexes, listUsage, recordCall, responseValue } from './usage.ts'

export const optionsSchema = Type.Object(
  {
    /** Evaluate flags for events without `$feature/*` properties (needs the decide plugin before this one). */
    evaluateMissing: Type.Boolean({ default: false }),
    /** Record per-flag usage from `$feature_flag_called` events. */
    trackUsage: Type.Boolean({ default: true }),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'flag-attribution',
  apiVersion: API_VERSION,
  optionsSchema,
  async setup(api, options) {
    const flags = options.evaluateMissing ? api.use('flags') : undefined
    if (options.trackUsage) await ensureUsageIndexes(api.db)

    api.hooks.flagAttribution.tapPromise({ name: api.id }, async function attributeFlags(event, ctx) {
      if (event.event === '$feature_flag_called') {
        const key = event.properties.$feature_flag
        if (typeof key !== 'string' || key === '')
          return drop('missing_feature_flag', { reason: '$feature_flag_called needs a $feature_flag property' })
        if (options.trackUsage)
          await recordCall(
            api.db,
            ctx.project.id,
            key,
            responseValue(event.properties.$feature_flag_response),
            event.timestamp,
          )
      }
      const derived = withActiveFlags(event.properties)
      if (derived) return { ...event, properties: derived }
      if (
        !flags ||
        event.personless ||
        featureValues(event.properties).size > 0 ||
        event.event === '$feature_flag_called'
      )
        return undefined
      const groups = event.properties.$groups
      const values = await flags.evaluateValues(ctx.project, event.distinctId, {
        groups: typeof groups === 'object' && groups !== null ? (groups as Record<string, string>) : {},
      })
      return { ...event, properties: { ...event.properties, ...attributionProperties(values) } }
    })

    if (options.trackUsage) {
      api.hooks.routes.tap({ name: api.id }, (router) => {
        router.get('/api/projects/:id/feature_flag_usage', api.http.auth.adminKey, async (ctx) => {
          const project = await api.http.projectParam(ctx)
          ctx.body = { results: await listUsage(api.db, project.id) }
        })
      })
    }
  },
})
