/** Pieces shared by the decide plugin's admin routes (all under /api, behind the admin key). */
import type Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import type { Db } from 'mongodb'
import type { AuditLog, HttpKit } from '../../../core/plugin-api.ts'
import { httpError } from '../../../core/plugin-api.ts'
import type { FlagsService } from '../service.ts'

export interface AdminDeps {
  db: Db
  http: HttpKit
  flags: FlagsService
  /** Where every change these routes make is recorded before they answer. */
  audit: AuditLog
  /** Largest JSON body accepted, in bytes. */
  bodyLimit: number
  /** The decide option: definitions with more backtracking regexes than it has room for are refused (regex-limit.ts). */
  regexBudgetMs: number
}

/** An admin route (admin key only); PostHog's REST paths end with a slash, and both forms are served. */
export function route(
  router: Router,
  http: HttpKit,
  method: 'get' | 'post' | 'put' | 'patch' | 'delete',
  path: string,
  handler: Middleware,
): void {
  router[method](path, http.auth.adminKey, handler)
  router[method](`${path}/`, http.auth.adminKey, handler)
}

/** A numeric path parameter, or a 404 (no flag or cohort has any other id). */
export function idParam(ctx: Context, name: string, what: string): number {
  const raw = String(ctx.params[name])
  const id = Number(raw)
  if (!/^[1-9][0-9]{0,15}$/.test(raw) || !Number.isSafeInteger(id))
    throw httpError('not_found', `no ${what} with id ${raw}`, name)
  return id
}
