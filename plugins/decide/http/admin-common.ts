/** Pieces shared by the decide plugin's admin routes (all under /api, behind the admin key). */
import type Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import type { Db } from 'mongodb'
import type { AuditLog, Project, ProjectLookup } from '../../../core/plugin-api.ts'
import { HttpError, badRequest } from '../../../core/plugin-api.ts'
import { readBody } from '../../../core/http/read-body.ts'
import type { FlagsService } from '../service.ts'

export interface AdminDeps {
  db: Db
  projects: ProjectLookup
  flags: FlagsService
  /** Where every change these routes make is recorded before they answer. */
  audit: AuditLog
  /** Largest JSON body accepted, in bytes. */
  bodyLimit: number
  /** The decide option: definitions with more backtracking regexes than it has room for are refused (regex-limit.ts). */
  regexBudgetMs: number
}

/** PostHog's REST paths end with a slash; both forms are served. */
export function route(
  router: Router,
  method: 'get' | 'post' | 'put' | 'patch' | 'delete',
  path: string,
  handler: Middleware,
): void {
  router[method](path, handler)
  router[method](`${path}/`, handler)
}

export async function jsonBody(ctx: Context, limit: number): Promise<unknown> {
  const bytes = await readBody(ctx.req, limit)
  if (bytes.length === 0) return {}
  try {
    return JSON.parse(bytes.toString('utf8'))
  } catch (error) {
    throw badRequest('invalid_json', `the request body is not valid JSON: ${(error as Error).message}`)
  }
}

/** The project named by `:id`, or a 404. */
export async function projectParam(ctx: Context, projects: ProjectLookup): Promise<Project> {
  const id = Number(ctx.params.id)
  const project = Number.isSafeInteger(id) && id > 0 ? await projects.get(id) : undefined
  if (!project) throw new HttpError(404, 'validation_error', 'not_found', `no project with id ${ctx.params.id}`, 'id')
  ctx.state.projectId = project.id
  return project
}

/** A numeric path parameter, or a 404 (no flag or cohort has any other id). */
export function idParam(ctx: Context, name: string, what: string): number {
  const raw = String(ctx.params[name])
  const id = Number(raw)
  if (!/^[1-9][0-9]{0,15}$/.test(raw) || !Number.isSafeInteger(id))
    throw new HttpError(404, 'validation_error', 'not_found', `no ${what} with id ${raw}`, name)
  return id
}

/** DRF's page envelope with `limit` / `offset` links. */
export function page<T>(
  ctx: Context,
  all: T[],
  defaultLimit = 100,
): { count: number; next: string | null; previous: string | null; results: T[] } {
  const limit = Math.min(Math.max(Number(ctx.query.limit) || defaultLimit, 1), 1000)
  const offset = Math.max(Number(ctx.query.offset) || 0, 0)
  const link = (at: number) => {
    const url = new URL(ctx.URL)
    url.searchParams.set('limit', String(limit))
    url.searchParams.set('offset', String(at))
    return url.toString()
  }
  return {
    count: all.length,
    next: offset + limit < all.length ? link(offset + limit) : null,
    previous: offset > 0 ? link(Math.max(offset - limit, 0)) : null,
    results: all.slice(offset, offset + limit),
  }
}
