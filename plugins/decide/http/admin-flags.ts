/**
 * Feature flags in PostHog's REST shape:
 *   GET/POST          /api/projects/:id/feature_flags/   (GET: ?limit=&offset=&search=)
 *   GET/PATCH/DELETE  /api/projects/:id/feature_flags/:flag_id/
 * DELETE marks the flag deleted (PostHog never removes a flag row: its id stays taken and flags
 * depending on it see `false`). Every change bumps the flag's `version` and reloads the cache
 * before answering, so the next flags request sees it.
 */
import type Router from '@koa/router'
import { Type } from 'typebox'
import type { Static } from 'typebox'
import { HttpError, badRequest } from '../../../core/plugin-api.ts'
import { parseWith } from '../../../core/admin/schemas.ts'
import type { FlagFilters } from '../evaluator/index.ts'
import { FiltersSchema, FlagOptionalFields } from '../definitions/schema.ts'
import { checkFlagRegexes } from '../definitions/regex-limit.ts'
import { DefinitionEdits } from '../store/edits.ts'
import type { FlagDocument } from '../store/documents.ts'
import { idParam, jsonBody, page, projectParam, route } from './admin-common.ts'
import type { AdminDeps } from './admin-common.ts'

const open = { additionalProperties: true } as const
/** PostHog's rule for keys made through its API. */
const RestKey = Type.String({ minLength: 1, maxLength: 400, pattern: '^[a-zA-Z0-9_-]+$' })

const FlagCreateBody = Type.Object(
  { key: RestKey, filters: Type.Optional(FiltersSchema), active: Type.Optional(Type.Boolean()), ...FlagOptionalFields },
  open,
)
const FlagPatchBody = Type.Object(
  {
    key: Type.Optional(RestKey),
    filters: Type.Optional(FiltersSchema),
    active: Type.Optional(Type.Boolean()),
    version: Type.Optional(Type.Integer()),
    ...FlagOptionalFields,
  },
  open,
)
type FlagChanges = Static<typeof FlagPatchBody>

/** A new flag is off: one condition set rolled out to nobody. */
const DEFAULT_FILTERS: FlagFilters = { groups: [{ properties: [], rollout_percentage: 0, variant: null }] }
const EDITABLE = [
  'name',
  'active',
  'deleted',
  'ensure_experience_continuity',
  'evaluation_runtime',
  'evaluation_tags',
  'evaluation_contexts',
  'bucketing_identifier',
  'has_encrypted_payloads',
  'is_remote_configuration',
] as const

export function flagJson(doc: FlagDocument, projectId: number) {
  const groups = doc.filters.groups ?? []
  const simple =
    groups.length === 1 &&
    (groups[0].properties ?? []).length === 0 &&
    (doc.filters.multivariate?.variants ?? []).length === 0 &&
    (doc.filters.aggregation_group_type_index ?? null) === null
  return {
    id: doc.id,
    team_id: projectId,
    key: doc.key,
    name: doc.name ?? '',
    filters: doc.filters,
    active: doc.active,
    deleted: doc.deleted,
    ensure_experience_continuity: doc.ensure_experience_continuity,
    version: doc.version,
    evaluation_runtime: doc.evaluation_runtime ?? 'all',
    bucketing_identifier: doc.bucketing_identifier ?? 'distinct_id',
    evaluation_tags: doc.evaluation_tags ?? doc.evaluation_contexts ?? [],
    has_encrypted_payloads: doc.has_encrypted_payloads ?? false,
    is_remote_configuration: doc.is_remote_configuration ?? false,
    is_simple_flag: simple,
    rollout_percentage: simple ? (groups[0].rollout_percentage ?? null) : null,
    created_at: new Date(doc.created_at).toISOString(),
    updated_at: new Date(doc.updated_at).toISOString(),
  }
}

/** PostHog's `?search=`: the text, in any case, within the key or the name. */
function matchesSearch(flag: FlagDocument, lowerCaseText: string): boolean {
  return flag.key.toLowerCase().includes(lowerCaseText) || (flag.name ?? '').toLowerCase().includes(lowerCaseText)
}

function assertKeyFree(key: string, id: number | null, siblings: FlagDocument[]): void {
  if (siblings.some((flag) => flag.key === key && !flag.deleted && flag.id !== id))
    throw badRequest('unique', 'There is already a feature flag with this key.', 'key')
}

function applyChanges(doc: FlagDocument, changes: FlagChanges): FlagDocument {
  const next: FlagDocument = { ...doc, updated_at: new Date() }
  if (changes.key !== undefined) next.key = changes.key
  if (changes.filters !== undefined) next.filters = changes.filters as FlagFilters
  for (const field of EDITABLE) if (changes[field] !== undefined) Object.assign(next, { [field]: changes[field] })
  if (changes.name === null) next.name = null
  if (changes.ensure_experience_continuity === null) next.ensure_experience_continuity = false
  return next
}

export function mountFlagRoutes(router: Router, { db, projects, flags, bodyLimit, regexBudgetMs }: AdminDeps): void {
  const base = '/api/projects/:id/feature_flags'
  const edits = DefinitionEdits.flags(db)

  route(router, 'get', base, async (ctx) => {
    const project = await projectParam(ctx, projects)
    const search = typeof ctx.query.search === 'string' ? ctx.query.search.trim().toLowerCase() : ''
    const live = (await flags.definitions(project.id)).flagDocuments.filter(
      (flag) => !flag.deleted && (search === '' || matchesSearch(flag, search)),
    )
    ctx.body = page(
      ctx,
      live.map((flag) => flagJson(flag, project.id)),
    )
  })

  route(router, 'post', base, async (ctx) => {
    const project = await projectParam(ctx, projects)
    const body = parseWith(FlagCreateBody, await jsonBody(ctx, bodyLimit))
    if (body.deleted !== true) checkFlagRegexes(body.key, body.filters, 'filters', regexBudgetMs)
    const now = new Date()
    const created = await edits.create(project.id, (id, siblings) => {
      assertKeyFree(body.key, null, siblings)
      const doc = {
        id,
        key: body.key,
        name: null,
        active: body.active ?? true,
        deleted: false,
        ensure_experience_continuity: false,
        version: 0,
        filters: DEFAULT_FILTERS,
        created_at: now,
        updated_at: now,
      }
      return applyChanges({ ...doc, project_id: project.id, generation: 0 }, { ...body, active: body.active ?? true })
    })
    await flags.refresh(project.id)
    ctx.status = 201
    ctx.body = flagJson(created, project.id)
  })

  route(router, 'get', `${base}/:flag_id`, async (ctx) => {
    const project = await projectParam(ctx, projects)
    const doc = await edits.get(project.id, idParam(ctx, 'flag_id', 'feature flag'))
    ctx.body = flagJson(doc, project.id)
  })

  route(router, 'patch', `${base}/:flag_id`, async (ctx) => {
    const project = await projectParam(ctx, projects)
    const id = idParam(ctx, 'flag_id', 'feature flag')
    const body = parseWith(FlagPatchBody, await jsonBody(ctx, bodyLimit))
    const updated = await edits.update(project.id, id, async (doc, siblings) => {
      if (body.version !== undefined && body.version !== doc.version) {
        throw new HttpError(
          409,
          'validation_error',
          'stale_version',
          `the flag is at version ${doc.version}, not ${body.version}: it was changed meanwhile`,
          'version',
        )
      }
      if (body.key !== undefined && body.key !== doc.key) assertKeyFree(body.key, id, await siblings())
      if (body.deleted === false && doc.deleted) assertKeyFree(body.key ?? doc.key, id, await siblings())
      const next = applyChanges(doc, body)
      // checked when the filters change or come back into use; a stored flag's other fields stay editable
      if (!next.deleted && (body.filters !== undefined || doc.deleted))
        checkFlagRegexes(next.key, next.filters, 'filters', regexBudgetMs)
      return next
    })
    await flags.refresh(project.id)
    ctx.body = flagJson(updated, project.id)
  })

  route(router, 'delete', `${base}/:flag_id`, async (ctx) => {
    const project = await projectParam(ctx, projects)
    await edits.update(project.id, idParam(ctx, 'flag_id', 'feature flag'), (doc) => ({
      ...doc,
      deleted: true,
      updated_at: new Date(),
    }))
    await flags.refresh(project.id)
    ctx.status = 204
  })
}
