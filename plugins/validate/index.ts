/**
 * validate: the first step. Drops what the service contract drops (no name, no distinct_id, an
 * invalid uuid) as ingestion warnings, and normalises the rest (uuid, `$ip`, `$sent_at`, name length).
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import { applyRules } from './rules.ts'

export const optionsSchema = Type.Object(
  {
    /** Event names are cut to this many characters, as PostHog does. */
    maxEventNameLength: Type.Integer({ minimum: 1, maximum: 10_000, default: 200 }),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'validate',
  apiVersion: API_VERSION,
  optionsSchema,
  setup(api, options) {
    // synchronous work: a sync tap costs the step chain no promise and no microtask per event
    api.hooks.validate.tap({ name: api.id }, function validateEvent(event, ctx) {
      return applyRules(event, ctx, options)
    })
  },
})
