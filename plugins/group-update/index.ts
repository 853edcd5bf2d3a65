/**
 * group-update: groups and group types (capture.md §2.9). Taps three hooks:
 * - validate (after the validate plugin): drops a `$groupidentify` whose key is over 400
 *   characters, before any person is made for it (§2.1 B.2);
 * - aliasResolve, first: strips `$set`/`$set_once`/`$unset` from `$groupidentify`, after geoip
 *   added its own and before the person steps could apply them (§2.3);
 * - groupUpdate: writes the group and adds `$group_<index>` for `$groups`.
 * Mounts the admin routes for groups and group types.
 */
import { Type } from 'typebox'
import { API_VERSION, Stage, definePlugin, drop } from '../../core/plugin-api.ts'
import { GROUP_IDENTIFY, MAX_GROUP_KEY_LENGTH, groupKeyOf, isGroupKeyTooLong, withoutPersonUpdates } from './rules.ts'
import { GroupTypeMappings } from './type-mapping.ts'
import { WarnOnce } from './warn-once.ts'
import { processGroups } from './step.ts'
import { mountGroupRoutes } from './routes.ts'

export const optionsSchema = Type.Object(
  {
    /** A refused group type (past the fifth) is warned about once per project and type per this many seconds. */
    limitWarningIntervalSeconds: Type.Number({ minimum: 0, default: 600 }),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'group-update',
  apiVersion: API_VERSION,
  optionsSchema,
  async setup(api, options) {
    const deps = {
      db: api.db,
      groups: api.use('groups'),
      mappings: new GroupTypeMappings(api.db),
      limitWarnings: new WarnOnce(options.limitWarningIntervalSeconds * 1000),
    }

    // the two checks are synchronous: sync taps cost the step chain no promise per event
    api.hooks.validate.tap({ name: api.id, stage: Stage.afterStep }, function checkGroupKey(event) {
      if (!isGroupKeyTooLong(event)) return undefined
      return drop('group_key_too_long', {
        group_type: event.properties.$group_type,
        length: groupKeyOf(event.properties.$group_key)?.length,
        max_length: MAX_GROUP_KEY_LENGTH,
      })
    })
    api.hooks.aliasResolve.tap({ name: api.id, stage: Stage.beforeStep }, function stripPersonUpdates(event) {
      return event.event === GROUP_IDENTIFY ? withoutPersonUpdates(event) : undefined
    })
    api.hooks.groupUpdate.tapPromise({ name: api.id }, async function updateGroups(event, ctx) {
      return processGroups(event, ctx, deps)
    })
    api.hooks.routes.tap({ name: api.id }, (router) => mountGroupRoutes(router, api.db, api.http))
  },
})
