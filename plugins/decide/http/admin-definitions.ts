/**
 * `PUT /api/projects/:id/flag_definitions` replaces all of a project's flags and cohorts with
 * `{flags, group_type_mapping, cohorts}` in PostHog's local-evaluation format (the migration path:
 * export from PostHog's /api/feature_flag/local_evaluation, PUT here). `GET` exports them in the
 * same format, static cohorts included as `{name, is_static: true}` objects, so GET then PUT
 * round-trips.
 */
import type Router from '@koa/router'
import { readDefinitions } from '../definitions/import.ts'
import { replaceDefinitions } from '../store/replace.ts'
import { toSdkDefinitions } from '../sdk-format.ts'
import type { ProjectDefinitions } from '../project-definitions.ts'
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

export function mountDefinitionRoutes(router: Router, { db, http, flags, bodyLimit, regexBudgetMs }: AdminDeps): void {
  const path = '/api/projects/:id/flag_definitions'
  route(router, http, 'get', path, async (ctx) => {
    const project = await http.projectParam(ctx)
    ctx.body = exportDefinitions(await flags.definitions(project.id))
  })
  route(router, http, 'put', path, async (ctx) => {
    const project = await http.projectParam(ctx)
    const imported = readDefinitions(await http.readJson(ctx, bodyLimit), regexBudgetMs)
    await replaceDefinitions(db, project.id, imported)
    await flags.refresh(project.id)
    ctx.body = exportDefinitions(await flags.definitions(project.id))
  })
}
