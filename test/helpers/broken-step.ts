/**
 * A plugin whose personUpdate step (policy fail) throws a non-retryable error on events named
 * `BROKEN_EVENT` while `brokenStep.broken` is true: what a bug in a plugin does, dead-lettering
 * those events. Setting `broken` to false is "deploying the fix", after which a replay succeeds.
 * Its options hold secrets, for the masking of GET /api/pipeline.
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'

export const BROKEN_EVENT = 'checkout_broken'

export const brokenStep = {
  broken: true,
  plugin: definePlugin({
    name: 'broken-step',
    apiVersion: API_VERSION,
    optionsSchema: Type.Object({
      apiKey: Type.String({ default: 'sk_live_not_to_be_shown' }),
      upstream: Type.String({ default: 'https://robot:hunter2@upstream.example/path' }),
      nested: Type.Object(
        { password: Type.String(), region: Type.String() },
        { default: { password: 'pw-0', region: 'eu' } },
      ),
    }),
    setup(api) {
      api.hooks.personUpdate.tap({ name: api.id }, (event) => {
        if (brokenStep.broken && event.event === BROKEN_EVENT) throw new Error('cannot parse the cart (a bug)')
        return undefined
      })
    },
  }),
}
