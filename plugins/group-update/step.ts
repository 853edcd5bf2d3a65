/**
 * The group-update step: writes the group of a `$groupidentify`, and attaches every event that
 * names groups in `$groups` to them as `$group_<index>` properties. Neither runs for personless
 * events (capture.md §2.9).
 */
import type { Db } from 'mongodb'
import type { EventContext, IngestEvent } from '../../core/plugin-api.ts'
import { GROUP_IDENTIFY, MAX_GROUP_TYPES, groupsOf, parseGroupIdentify, withGroupColumns, withoutGroupColumns } from './rules.ts'
import type { GroupTypeMappings, TypeIndex } from './type-mapping.ts'
import { upsertGroup } from './groups.ts'
import type { WarnOnce } from './warn-once.ts'

export interface GroupStepDeps {
  readonly db: Db
  readonly mappings: GroupTypeMappings
  readonly limitWarnings: WarnOnce
}

export async function processGroups(event: IngestEvent, ctx: EventContext, deps: GroupStepDeps): Promise<IngestEvent | undefined> {
  if (event.personless) {
    const properties = withoutGroupColumns(event.properties)
    return properties && { ...event, properties }
  }
  if (event.event === GROUP_IDENTIFY) {
    const identify = parseGroupIdentify(event.properties)
    if (!identify.ok) ctx.warn(identify.warning, identify.details)
    else {
      const groupTypeIndex = await indexOf(identify.type, event, ctx, deps)
      if (groupTypeIndex !== undefined) await upsertGroup(deps.db, { projectId: ctx.project.id, groupTypeIndex, groupKey: identify.key, set: identify.set, timestamp: event.timestamp })
    }
  }

  const columns: Array<[number, string]> = []
  for (const [groupType, groupKey] of groupsOf(event.properties)) {
    const index = await indexOf(groupType, event, ctx, deps)
    if (index !== undefined) columns.push([index, groupKey])
  }
  return columns.length ? { ...event, properties: withGroupColumns(event.properties, columns) } : undefined
}

/** The group type's index, or undefined past the limit (warned once per interval). A function, not a closure per event. */
async function indexOf(groupType: string, event: IngestEvent, ctx: EventContext, deps: GroupStepDeps): Promise<number | undefined> {
  const index: TypeIndex = await deps.mappings.indexOf(ctx.project.id, groupType, event.timestamp)
  if (index !== 'limit_reached') return index
  if (deps.limitWarnings.shouldWarn(`${ctx.project.id}\u0000${groupType}`)) ctx.warn('group_type_limit_reached', { group_type: groupType, max_group_types: MAX_GROUP_TYPES })
  return undefined
}
