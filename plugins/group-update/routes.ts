/**
 * Admin routes for groups (behind the admin key, like every /api route):
 *   GET /api/projects/:id/group_types                         → { results: [mapping…] }
 *   GET /api/projects/:id/groups?group_type=&group_key=       → the group, or 404
 *   GET /api/projects/:id/groups?group_type=[&limit=&after=]  → { results: [group…], next }
 */
import type Router from '@koa/router'
import type { Db, Filter } from 'mongodb'
import type { HttpKit } from '../../core/plugin-api.ts'
import { Type } from 'typebox'
import { GROUP_COLLECTIONS, httpError, parseWith } from '../../core/plugin-api.ts'
import type { GroupDocument, GroupTypeMappingDocument } from '../../core/plugin-api.ts'

const DEFAULT_LIMIT = 100

const GroupsQuery = Type.Object({
  group_type: Type.String({ minLength: 1 }),
  group_key: Type.Optional(Type.String()),
  /** Page after this group key (keys are listed in ascending order). */
  after: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String({ pattern: '^(1000|[1-9][0-9]{0,2})$' })),
})

function groupJson(doc: GroupDocument, groupType: string) {
  return {
    group_type: groupType,
    group_type_index: doc.group_type_index,
    group_key: doc.group_key,
    group_properties: doc.group_properties,
    created_at: doc.created_at.toISOString(),
    version: doc.version,
  }
}

export function mountGroupRoutes(router: Router, db: Db, http: HttpKit): void {
  const mappings = db.collection<GroupTypeMappingDocument>(GROUP_COLLECTIONS.groupTypeMappings)
  const groups = db.collection<GroupDocument>(GROUP_COLLECTIONS.groups)

  router.get('/api/projects/:id/group_types', http.auth.adminKey, async (ctx) => {
    const project = await http.projectParam(ctx)
    const docs = await mappings.find({ project_id: project.id }).sort({ group_type_index: 1 }).toArray()
    ctx.body = {
      results: docs.map((d) => ({
        group_type: d.group_type,
        group_type_index: d.group_type_index,
        created_at: d.created_at.toISOString(),
      })),
    }
  })

  router.get('/api/projects/:id/groups', http.auth.adminKey, async (ctx) => {
    const project = await http.projectParam(ctx)
    const query = parseWith(GroupsQuery, ctx.query)
    const mapping = await mappings.findOne({ project_id: project.id, group_type: query.group_type })
    if (query.group_key !== undefined) {
      const group =
        mapping &&
        (await groups.findOne({
          project_id: project.id,
          group_type_index: mapping.group_type_index,
          group_key: query.group_key,
        }))
      if (!group) throw httpError('not_found', `no ${query.group_type} group with key ${query.group_key}`, 'group_key')
      ctx.body = groupJson(group, query.group_type)
      return
    }
    if (!mapping) {
      ctx.body = { results: [], next: null }
      return
    }
    const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit)
    const filter: Filter<GroupDocument> = { project_id: project.id, group_type_index: mapping.group_type_index }
    if (query.after !== undefined) filter.group_key = { $gt: query.after }
    const docs = await groups
      .find(filter)
      .sort({ group_key: 1 })
      .limit(limit + 1)
      .toArray()
    const page = http.cursorPage(ctx, docs, limit, 'after', (last) => last.group_key)
    ctx.body = { results: page.results.map((doc) => groupJson(doc, query.group_type)), next: page.next }
  })
}
