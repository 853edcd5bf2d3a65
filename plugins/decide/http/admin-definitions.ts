/**
 * `PUT /api/projects/:id/flag_definitions` replaces all of a project's flags and cohorts with
 * `{flags, group_type_mapping, cohorts}` in PostHog's local-evaluation format (the migration path:
 * export from PostHog's /api/feature_flag/local_evaluation, PUT here). `GET` exports them in the
 * same format, static cohorts included as `{name, is_static: true}` objects, so GET then PUT
 * round-trips.
 */
import { createHash } from 'node:crypto'
import type Router from '@koa/router'
import { readDefinitions } from '../definitions/import.ts'
import { replaceDefinitions } from '../store/replace.ts'
import { toSdkDefinitions } from '../sdk-format.ts'
import type { ProjectDefinitions } from '../project-definitions.ts'
import type { AuditChange } from '../../../core/plugin-api.ts'
import type { FlagDocument } from '../store/documents.ts'
import { definitionState } from '../store/documents.ts'
import { route } from './admin-common.ts'
import type { AdminDeps } from './admin-common.ts'

export function exportDefinitions(definitions: ProjectDefinitions) {
  const sdk = toSdkDefinitions(definitions.projectId, [...definitions.flagDocuments], [], {
    ...definitions.groupTypeMapping,
  })
  const cohorts: Record<string, unknown> = {}
  for (const cohort of definitions.cohortDocuments) {
    if (cohort.deleted) continue
    cohorts[String(cohort.id)] = cohort.is_static
      ? { name: cohort.name, description: cohort.description, is_static: true }
      : cohort.filters.properties
  }
  return { ...sdk, cohorts }
}

const fingerprint = (value: unknown) =>
  `sha256:${createHash('sha256')
    .update(JSON.stringify(value ?? null))
    .digest('hex')
    .slice(0, 16)}`

/**
 * A project's definitions as the audit log keeps an import's before and after: each flag's
 * settings and a fingerprint of its filters, each cohort's name and a fingerprint of its filters.
 * Whole definitions can be far larger than a record may be; the difference still names every
 * flag and cohort added, removed or changed.
 */
export function definitionsSummary(definitions: ProjectDefinitions) {
  const flags: Record<string, unknown> = {}
  for (const flag of definitions.flagDocuments) {
    if (flag.deleted) continue
    flags[flag.key] = { id: flag.id, active: flag.active, version: flag.version, filters: fingerprint(flag.filters) }
  }
  const cohorts: Record<string, unknown> = {}
  for (const cohort of definitions.cohortDocuments) {
    if (cohort.deleted) continue
    cohorts[String(cohort.id)] = {
      name: cohort.name,
      is_static: cohort.is_static,
      filters: fingerprint(cohort.filters),
    }
  }
  return { flags, cohorts, group_type_mapping: { ...definitions.groupTypeMapping } }
}

/** Fields an import sets anew on every flag: not part of what it changed. */
const IMPORT_BOOKKEEPING = ['created_at', 'updated_at'] as const

/**
 * One `imported` record per flag the import wrote or removed, with what it changed: a flag's
 * history (and restore) starts afresh there, since an import may give an id to another flag
 * (AuditLog.stateAt ignores a flag's records older than its latest import).
 */
function importedFlagChanges(
  projectId: number,
  before: readonly FlagDocument[],
  after: readonly FlagDocument[],
): AuditChange[] {
  const previous = new Map(before.map((doc) => [doc.id, doc]))
  const change = (old: FlagDocument | undefined, now: FlagDocument | undefined): AuditChange => ({
    projectId,
    entityType: 'feature_flag',
    entityId: (now ?? old)?.id ?? null,
    action: 'imported',
    before: old ? definitionState(old) : null,
    after: now ? definitionState(now) : null,
    version: now ? now.version : null,
    ignore: IMPORT_BOOKKEEPING,
  })
  const changes = after.map((doc) => change(previous.get(doc.id), doc))
  const kept = new Set(after.map((doc) => doc.id))
  for (const doc of before) if (!kept.has(doc.id)) changes.push(change(doc, undefined))
  return changes
}

export function mountDefinitionRoutes(
  router: Router,
  { db, http, flags, audit, bodyLimit, regexBudgetMs }: AdminDeps,
): void {
  const path = '/api/projects/:id/flag_definitions'
  route(router, http, 'get', path, async (ctx) => {
    const project = await http.projectParam(ctx)
    ctx.body = exportDefinitions(await flags.definitions(project.id))
  })
  route(router, http, 'put', path, async (ctx) => {
    const project = await http.projectParam(ctx)
    const imported = readDefinitions(await http.readJson(ctx, bodyLimit), regexBudgetMs)
    await flags.refresh(project.id)
    const before = await flags.definitions(project.id)
    await replaceDefinitions(db, project.id, imported)
    await flags.refresh(project.id)
    const after = await flags.definitions(project.id)
    await audit.record(ctx, [
      {
        projectId: project.id,
        entityType: 'flag_definitions',
        entityId: null,
        action: 'imported',
        before: definitionsSummary(before),
        after: definitionsSummary(after),
        details: { flags: imported.flags.length, cohorts: imported.cohorts.length },
      },
      ...importedFlagChanges(project.id, before.flagDocuments, after.flagDocuments),
    ])
    ctx.body = exportDefinitions(after)
  })
}
