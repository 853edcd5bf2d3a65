/**
 * The group-update step: writes the group of a `$groupidentify`, and attaches every event that
 * names groups in `$groups` to them as `$group_<index>` properties. Neither runs for personless
 * events (capture.md §2.9).
 */
import type { Db } from 'mongodb'
import type { EventContext, GroupsReader, IngestEvent } from '../../core/plugin-api.ts'
import { cutToScalars } from '../../core/plugin-api.ts'
import {
  GROUP_IDENTIFY,
  MAX_GROUP_TYPES,
  groupsOf,
  parseGroupIdentify,
  withGroupColumns,
  withoutGroupColumns,
} from './rules.ts'
import type { GroupTypeMappings } from './type-mapping.ts'
import { upsertGroup } from './groups.ts'
import type { WarnOnce } from './warn-once.ts'

export interface GroupStepDeps {
  readonly db: Db
  /** The core's groups reader, told of each group written so that flags read it at once. */
  readonly groups: Pick<GroupsReader, 'changed'>
  readonly mappings: GroupTypeMappings
  readonly limitWarnings: WarnOnce
}

/** A refused type's warning names at most this many of the event's refused types, each cut to this length. */
const NAMED_REFUSED_TYPES = 10
const MAX_NAMED_TYPE_CHARS = 200

export async function processGroups(
  event: IngestEvent,
  ctx: EventContext,
  deps: GroupStepDeps,
): Promise<IngestEvent | undefined> {
  if (event.personless) {
    const properties = withoutGroupColumns(event.properties)
    return properties && { ...event, properties }
  }
  const refused = new Set<string>()
  if (event.event === GROUP_IDENTIFY) {
    const identify = parseGroupIdentify(event.properties)
    if (!identify.ok) ctx.warn(identify.warning, identify.details)
    else {
      const groupTypeIndex = await deps.mappings.indexOf(ctx.project.id, identify.type, event.timestamp)
      if (groupTypeIndex === 'limit_reached') refused.add(identify.type)
      else
        try {
          await upsertGroup(deps.db, {
            projectId: ctx.project.id,
            groupTypeIndex,
            groupKey: identify.key,
            set: identify.set,
            timestamp: event.timestamp,
          })
        } finally {
          deps.groups.changed(ctx.project.id, groupTypeIndex, identify.key) // even a failed write may have landed
        }
    }
  }

  const columns: Array<[number, string]> = []
  for (const [groupType, groupKey] of groupsOf(event.properties)) {
    const index = await deps.mappings.indexOf(ctx.project.id, groupType, event.timestamp)
    if (index === 'limit_reached') refused.add(groupType)
    else columns.push([index, groupKey])
  }
  if (refused.size) warnLimitReached([...refused], ctx, deps)
  return columns.length ? { ...event, properties: withGroupColumns(event.properties, columns) } : undefined
}

/**
 * One warning per event, however many types it names past the limit, and only when one of the
 * first types it names was not warned about in the window (an SDK that sends a sixth type with
 * every event is warned about once per window). Names are cut: they are client data.
 */
function warnLimitReached(refused: string[], ctx: EventContext, deps: GroupStepDeps): void {
  const named = refused.slice(0, NAMED_REFUSED_TYPES).map((type) => cutToScalars(type, MAX_NAMED_TYPE_CHARS))
  // every type is checked, so that one already warned about does not hide the others (no short-circuit)
  const due = named.map((type) => deps.limitWarnings.shouldWarn(`${ctx.project.id}\u0000${type}`)).includes(true)
  if (!due) return
  ctx.warn('group_type_limit_reached', {
    group_type: named[0],
    group_types: named,
    refused_count: refused.length,
    max_group_types: MAX_GROUP_TYPES,
  })
}
