/**
 * Cohorts in PostHog's REST shape, and static membership by distinct id:
 *   GET/POST          /api/projects/:id/cohorts/
 *   GET/PATCH/DELETE  /api/projects/:id/cohorts/:cohort_id/
 *   GET/POST/DELETE   /api/projects/:id/cohorts/:cohort_id/members/   (static cohorts only)
 * Dynamic cohorts carry `filters.properties`, a property group; static ones carry members. DELETE
 * marks the cohort deleted: a flag still targeting it then fails, as PostHog's flags service does.
 */
import type Router from '@koa/router'
import { Type } from 'typebox'
import type { Context } from 'koa'
import { httpError, parseWith } from '../../../core/plugin-api.ts'
import type { AuditLog } from '../../../core/plugin-api.ts'
import { checkPropertyGroup } from '../definitions/schema.ts'
import { checkCohortRegexes } from '../definitions/regex-limit.ts'
import { DefinitionEdits } from '../store/edits.ts'
import type { CohortDocument } from '../store/documents.ts'
import { definitionState } from '../store/documents.ts'
import { CohortMembers } from '../store/members.ts'
import { idParam, route } from './admin-common.ts'
import type { AdminDeps } from './admin-common.ts'
import { assertVersion, expectedVersion, setVersionTag } from './admin-versions.ts'

const open = { additionalProperties: true } as const
const DistinctIds = Type.Array(Type.String({ minLength: 1, maxLength: 400 }), { minItems: 1, maxItems: 10_000 })
const Filters = Type.Object({ properties: Type.Unknown() }, open)

const CohortCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 400 }),
    description: Type.Optional(Type.String()),
    is_static: Type.Optional(Type.Boolean()),
    filters: Type.Optional(Filters),
    distinct_ids: Type.Optional(DistinctIds),
  },
  open,
)
const CohortPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
    description: Type.Optional(Type.String()),
    filters: Type.Optional(Filters),
    deleted: Type.Optional(Type.Boolean()),
    is_static: Type.Optional(Type.Boolean()),
    version: Type.Optional(Type.Integer()),
  },
  open,
)
const MembersBody = Type.Object({ distinct_ids: DistinctIds }, open)
const MembersQuery = Type.Object({
  after: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String({ pattern: '^(10000|[1-9][0-9]{0,3})$' })),
})

/** At most this many distinct ids are listed in a membership change's record (the count is always there). */
const LISTED_MEMBERS = 100

function recordCohort(
  audit: AuditLog,
  ctx: Context,
  projectId: number,
  action: string,
  before: CohortDocument | null,
  after: CohortDocument,
) {
  return audit.record(ctx, {
    projectId,
    entityType: 'cohort',
    entityId: after.id,
    action,
    before: before && definitionState(before),
    after: definitionState(after),
    version: after.version,
    ignore: ['version', 'updated_at'],
  })
}

function recordMembers(
  audit: AuditLog,
  ctx: Context,
  projectId: number,
  cohort: CohortDocument,
  action: 'members_added' | 'members_removed',
  distinctIds: string[],
  count: number,
) {
  return audit.record(ctx, {
    projectId,
    entityType: 'cohort',
    entityId: cohort.id,
    action,
    before: null,
    after: null,
    version: null,
    details: {
      count,
      distinct_ids: distinctIds.slice(0, LISTED_MEMBERS),
      listed_all: distinctIds.length <= LISTED_MEMBERS,
    },
  })
}

function cohortJson(doc: CohortDocument, count: number | null) {
  return {
    id: doc.id,
    name: doc.name ?? '',
    description: doc.description ?? '',
    filters: doc.filters,
    is_static: doc.is_static,
    deleted: doc.deleted,
    cohort_type: doc.cohort_type ?? (doc.is_static ? 'static' : 'person_property'),
    version: doc.version,
    count,
    created_at: new Date(doc.created_at).toISOString(),
    updated_at: new Date(doc.updated_at).toISOString(),
  }
}

export function mountCohortRoutes(
  router: Router,
  { db, http, flags, audit, bodyLimit, regexBudgetMs }: AdminDeps,
): void {
  const base = '/api/projects/:id/cohorts'
  const edits = DefinitionEdits.cohorts(db)
  const members = new CohortMembers(db)
  const countOf = (projectId: number, doc: CohortDocument) =>
    doc.is_static ? members.count(projectId, doc.id) : Promise.resolve(null)
  const staticCohort = async (projectId: number, id: number) => {
    const doc = await edits.get(projectId, id)
    if (!doc.is_static)
      throw httpError('not_static', `cohort ${id} is dynamic: its members come from its filters`, 'cohort_id')
    return doc
  }

  route(router, http, 'get', base, async (ctx) => {
    const project = await http.projectParam(ctx)
    const live = (await flags.definitions(project.id)).cohortDocuments.filter((doc) => !doc.deleted)
    const listed = http.page(ctx, live)
    ctx.body = {
      ...listed,
      results: await Promise.all(listed.results.map(async (doc) => cohortJson(doc, await countOf(project.id, doc)))),
    }
  })

  route(router, http, 'post', base, async (ctx) => {
    const project = await http.projectParam(ctx)
    const body = parseWith(CohortCreateBody, await http.readJson(ctx, bodyLimit))
    const isStatic = body.is_static === true
    if (!isStatic) checkPropertyGroup(body.filters?.properties, 'filters.properties')
    if (!isStatic)
      checkCohortRegexes(`cohort "${body.name}"`, body.filters?.properties, 'filters.properties', regexBudgetMs)
    if (!isStatic && body.distinct_ids)
      throw httpError('invalid_input', 'distinct_ids: only static cohorts have members', 'distinct_ids')
    const now = new Date()
    const created = await edits.create(project.id, (id) => ({
      id,
      name: body.name,
      description: body.description ?? '',
      is_static: isStatic,
      deleted: false,
      version: 0,
      filters: isStatic ? {} : { properties: body.filters?.properties },
      cohort_type: isStatic ? 'static' : null,
      created_at: now,
      updated_at: now,
    }))
    if (body.distinct_ids) await members.add(project.id, created.id, body.distinct_ids)
    await recordCohort(audit, ctx, project.id, 'created', null, created)
    await flags.refresh(project.id)
    ctx.status = 201
    ctx.body = cohortJson(created, await countOf(project.id, created))
  })

  route(router, http, 'get', `${base}/:cohort_id`, async (ctx) => {
    const project = await http.projectParam(ctx)
    const doc = await edits.get(project.id, idParam(ctx, 'cohort_id', 'cohort'))
    setVersionTag(ctx, doc.version)
    ctx.body = cohortJson(doc, await countOf(project.id, doc))
  })

  route(router, http, 'patch', `${base}/:cohort_id`, async (ctx) => {
    const project = await http.projectParam(ctx)
    const body = parseWith(CohortPatchBody, await http.readJson(ctx, bodyLimit))
    const expected = expectedVersion(ctx, body.version)
    let before: CohortDocument | undefined
    const updated = await edits.update(project.id, idParam(ctx, 'cohort_id', 'cohort'), (doc) => {
      before = doc
      assertVersion('cohort', doc.version, expected)
      if (body.is_static !== undefined && body.is_static !== doc.is_static)
        throw httpError('invalid_input', 'is_static: a cohort cannot change between static and dynamic', 'is_static')
      if (body.filters !== undefined && doc.is_static)
        throw httpError('invalid_input', 'filters: a static cohort has members, not filters', 'filters')
      if (body.filters !== undefined) checkPropertyGroup(body.filters.properties, 'filters.properties')
      if (body.filters !== undefined)
        checkCohortRegexes(`cohort ${doc.id}`, body.filters.properties, 'filters.properties', regexBudgetMs)
      return {
        ...doc,
        ...(body.name !== undefined && { name: body.name }),
        ...(body.description !== undefined && { description: body.description }),
        ...(body.deleted !== undefined && { deleted: body.deleted }),
        ...(body.filters !== undefined && { filters: { properties: body.filters.properties } }),
        updated_at: new Date(),
      }
    })
    await recordCohort(audit, ctx, project.id, 'updated', before ?? null, updated)
    await flags.refresh(project.id)
    setVersionTag(ctx, updated.version)
    ctx.body = cohortJson(updated, await countOf(project.id, updated))
  })

  route(router, http, 'delete', `${base}/:cohort_id`, async (ctx) => {
    const project = await http.projectParam(ctx)
    const expected = expectedVersion(ctx, undefined)
    let before: CohortDocument | undefined
    const deleted = await edits.update(project.id, idParam(ctx, 'cohort_id', 'cohort'), (doc) => {
      before = doc
      assertVersion('cohort', doc.version, expected)
      return { ...doc, deleted: true, updated_at: new Date() }
    })
    await recordCohort(audit, ctx, project.id, 'deleted', before ?? null, deleted)
    await flags.refresh(project.id)
    ctx.status = 204
  })

  route(router, http, 'get', `${base}/:cohort_id/members`, async (ctx) => {
    const project = await http.projectParam(ctx)
    const cohort = await staticCohort(project.id, idParam(ctx, 'cohort_id', 'cohort'))
    const query = parseWith(MembersQuery, ctx.query)
    const limit = query.limit === undefined ? 1000 : Number(query.limit)
    const results = await members.list(project.id, cohort.id, limit, query.after)
    let next: string | null = null
    if (results.length === limit) {
      const url = new URL(ctx.URL)
      url.searchParams.set('after', results[results.length - 1])
      next = url.toString()
    }
    ctx.body = { results, next }
  })

  route(router, http, 'post', `${base}/:cohort_id/members`, async (ctx) => {
    const project = await http.projectParam(ctx)
    const cohort = await staticCohort(project.id, idParam(ctx, 'cohort_id', 'cohort'))
    const body = parseWith(MembersBody, await http.readJson(ctx, bodyLimit))
    const added = await members.add(project.id, cohort.id, body.distinct_ids)
    await recordMembers(audit, ctx, project.id, cohort, 'members_added', body.distinct_ids, added)
    ctx.body = { added }
  })

  route(router, http, 'delete', `${base}/:cohort_id/members`, async (ctx) => {
    const project = await http.projectParam(ctx)
    const cohort = await staticCohort(project.id, idParam(ctx, 'cohort_id', 'cohort'))
    const body = parseWith(MembersBody, await http.readJson(ctx, bodyLimit))
    const removed = await members.remove(project.id, cohort.id, body.distinct_ids)
    await recordMembers(audit, ctx, project.id, cohort, 'members_removed', body.distinct_ids, removed)
    ctx.body = { removed }
  })
}
