/**
 * Feature flags in PostHog's REST shape:
 *   GET/POST          /api/projects/:id/feature_flags/   (GET: ?limit=&offset=&search=, newest first)
 *   GET/PATCH/DELETE  /api/projects/:id/feature_flags/:flag_id/
 *   POST              /api/projects/:id/feature_flags/:flag_id/restore/   (an earlier version, from the audit log)
 * DELETE marks the flag deleted (PostHog never removes a flag row: its id stays taken and flags
 * depending on it see `false`). Every change bumps the flag's `version` (a change naming an older
 * one is refused: admin-versions.ts), is recorded in the audit log and reloads the cache before
 * answering, so the next flags request sees it.
 */
import type Router from '@koa/router'
import { Type } from 'typebox'
import type { Static } from 'typebox'
import type { Context } from 'koa'
import { httpError, parseWith } from '../../../core/plugin-api.ts'
import type { AuditLog } from '../../../core/plugin-api.ts'
import type { FlagFilters } from '../evaluator/index.ts'
import { FiltersSchema, FlagOptionalFields } from '../definitions/schema.ts'
import { checkFlagRegexes } from '../definitions/regex-limit.ts'
import { DefinitionEdits } from '../store/edits.ts'
import type { FlagDocument } from '../store/documents.ts'
import { definitionState } from '../store/documents.ts'
import { idParam, route } from './admin-common.ts'
import type { AdminDeps } from './admin-common.ts'
import { assertVersion, expectedVersion, setVersionTag } from './admin-versions.ts'
import { OPTIONAL_FIELDS } from '../definitions/import.ts'

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
const RestoreBody = Type.Object(
  { to_version: Type.Integer({ minimum: 0 }), version: Type.Optional(Type.Integer()) },
  { additionalProperties: false },
)
const FLAG = 'feature_flag'
/** Bookkeeping every change moves: left out of the audit log's difference. */
const BOOKKEEPING = ['version', 'updated_at'] as const

/** A new flag is off: one condition set rolled out to nobody. */
const DEFAULT_FILTERS: FlagFilters = { groups: [{ properties: [], rollout_percentage: 0, variant: null }] }
const EDITABLE = ['name', 'active', 'deleted', 'ensure_experience_continuity', ...OPTIONAL_FIELDS] as const

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

/** Stored fields a restore brings back (everything the REST API edits). */
const RESTORED = ['key', 'filters', ...EDITABLE] as const

function recordFlag(
  audit: AuditLog,
  ctx: Context,
  projectId: number,
  action: string,
  before: FlagDocument | null,
  after: FlagDocument,
  details?: Record<string, unknown>,
) {
  return audit.record(ctx, {
    projectId,
    entityType: FLAG,
    entityId: after.id,
    action,
    before: before && definitionState(before),
    after: definitionState(after),
    version: after.version,
    ignore: BOOKKEEPING,
    details,
  })
}

function answerFlag(ctx: Context, doc: FlagDocument, projectId: number, status = 200) {
  ctx.status = status
  setVersionTag(ctx, doc.version)
  ctx.body = flagJson(doc, projectId)
}

/** PostHog's `?search=`: the text, in any case, within the key or the name. */
function matchesSearch(flag: FlagDocument, lowerCaseText: string): boolean {
  return flag.key.toLowerCase().includes(lowerCaseText) || (flag.name ?? '').toLowerCase().includes(lowerCaseText)
}

/**
 * PostHog's list order, `-created_at`: a flag just made is on the first page however many there
 * are. Flags made together (an import) come the higher id first.
 */
function newestFirst(a: FlagDocument, b: FlagDocument): number {
  return new Date(b.created_at).getTime() - new Date(a.created_at).getTime() || b.id - a.id
}

function assertKeyFree(key: string, id: number | null, siblings: FlagDocument[]): void {
  if (siblings.some((flag) => flag.key === key && !flag.deleted && flag.id !== id))
    throw httpError('unique', 'There is already a feature flag with this key.', 'key')
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

export function mountFlagRoutes(router: Router, { db, http, flags, audit, bodyLimit, regexBudgetMs }: AdminDeps): void {
  const base = '/api/projects/:id/feature_flags'
  const edits = DefinitionEdits.flags(db)

  route(router, http, 'get', base, async (ctx) => {
    const project = await http.projectParam(ctx)
    const search = typeof ctx.query.search === 'string' ? ctx.query.search.trim().toLowerCase() : ''
    const live = (await flags.definitions(project.id)).flagDocuments
      .filter((flag) => !flag.deleted && (search === '' || matchesSearch(flag, search)))
      .sort(newestFirst)
    const page = http.page(ctx, live)
    ctx.body = { ...page, results: page.results.map((flag) => flagJson(flag, project.id)) }
  })

  route(router, http, 'post', base, async (ctx) => {
    const project = await http.projectParam(ctx)
    const body = parseWith(FlagCreateBody, await http.readJson(ctx, bodyLimit))
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
    await recordFlag(audit, ctx, project.id, 'created', null, created)
    await flags.refresh(project.id)
    answerFlag(ctx, created, project.id, 201)
  })

  route(router, http, 'get', `${base}/:flag_id`, async (ctx) => {
    const project = await http.projectParam(ctx)
    answerFlag(ctx, await edits.get(project.id, idParam(ctx, 'flag_id', 'feature flag')), project.id)
  })

  route(router, http, 'patch', `${base}/:flag_id`, async (ctx) => {
    const project = await http.projectParam(ctx)
    const id = idParam(ctx, 'flag_id', 'feature flag')
    const body = parseWith(FlagPatchBody, await http.readJson(ctx, bodyLimit))
    const expected = expectedVersion(ctx, body.version)
    let before: FlagDocument | undefined
    const updated = await edits.update(project.id, id, async (doc, siblings) => {
      before = doc
      assertVersion('flag', doc.version, expected)
      if (body.key !== undefined && body.key !== doc.key) assertKeyFree(body.key, id, await siblings())
      if (body.deleted === false && doc.deleted) assertKeyFree(body.key ?? doc.key, id, await siblings())
      const next = applyChanges(doc, body)
      // checked when the filters change or come back into use; a stored flag's other fields stay editable
      if (!next.deleted && (body.filters !== undefined || doc.deleted))
        checkFlagRegexes(next.key, next.filters, 'filters', regexBudgetMs)
      return next
    })
    await recordFlag(audit, ctx, project.id, 'updated', before ?? null, updated)
    await flags.refresh(project.id)
    answerFlag(ctx, updated, project.id)
  })

  route(router, http, 'delete', `${base}/:flag_id`, async (ctx) => {
    const project = await http.projectParam(ctx)
    const expected = expectedVersion(ctx, undefined)
    let before: FlagDocument | undefined
    const deleted = await edits.update(project.id, idParam(ctx, 'flag_id', 'feature flag'), (doc) => {
      before = doc
      assertVersion('flag', doc.version, expected)
      return { ...doc, deleted: true, updated_at: new Date() }
    })
    await recordFlag(audit, ctx, project.id, 'deleted', before ?? null, deleted)
    await flags.refresh(project.id)
    ctx.status = 204
  })

  route(router, http, 'post', `${base}/:flag_id/restore`, async (ctx) => {
    const project = await http.projectParam(ctx)
    const id = idParam(ctx, 'flag_id', 'feature flag')
    const body = parseWith(RestoreBody, await http.readJson(ctx, bodyLimit))
    const expected = expectedVersion(ctx, body.version)
    const state = (await audit.stateAt(project.id, FLAG, id, body.to_version)) as Partial<FlagDocument> | undefined
    if (!state)
      throw httpError(
        'not_found',
        `the audit log has no version ${body.to_version} of feature flag ${id}`,
        'to_version',
      )
    let before: FlagDocument | undefined
    const restored = await edits.update(project.id, id, async (doc, siblings) => {
      before = doc
      assertVersion('flag', doc.version, expected)
      const next: FlagDocument = { ...doc, updated_at: new Date() }
      // a field the recorded version lacked is removed again: absent and null read the same
      for (const field of RESTORED)
        if (Object.hasOwn(state, field)) Object.assign(next, { [field]: state[field] })
        else delete (next as Partial<FlagDocument>)[field]
      if (!next.deleted) {
        assertKeyFree(next.key, id, await siblings())
        checkFlagRegexes(next.key, next.filters, 'filters', regexBudgetMs)
      }
      return next
    })
    await recordFlag(audit, ctx, project.id, 'restored', before ?? null, restored, {
      restored_version: body.to_version,
    })
    await flags.refresh(project.id)
    answerFlag(ctx, restored, project.id)
  })
}
