/**
 * The capture endpoints. Every path accepts every body encoding (design.md §1); success is exactly
 * 200 `{"status": 1}` because posthog-js treats anything else, 204 included, as a failure.
 */
import type Router from '@koa/router'
import type { Context } from 'koa'
import type { Config } from '../config.ts'
import type { IngestRequest } from '../pipeline.ts'
import type { ProjectStore } from '../projects.ts'
import { httpError } from '../errors.ts'
import { readPayload, singleValues } from '../http/payload.ts'
import { parseCaptureRequest } from '../capture/request.ts'
import { rateLimited, rateLimiterFor } from '../http/rate-limit.ts'
import { crossOrigin } from '../http/cors.ts'

export const CAPTURE_PATHS = ['/i/v0/e', '/batch', '/e', '/capture', '/track', '/engage'] as const

/** Where accepted events go: the pipeline itself (inline mode) or the ingest queue (queue mode). */
export interface Intake {
  ingest(request: IngestRequest): Promise<unknown>
}

export interface CaptureDeps {
  readonly config: Config
  readonly projects: ProjectStore
  readonly pipeline: Intake
}

export function captureHandler({ config, projects, pipeline }: CaptureDeps) {
  const limits = { maxBodyBytes: config.server.bodyLimitBytes, maxDecodedBytes: config.server.decodedLimitBytes }
  const rateLimiter = rateLimiterFor(config.rateLimit)
  return async function capture(ctx: Context): Promise<void> {
    const receivedAt = new Date()
    const query = singleValues(ctx.query)
    const text = await readPayload(ctx, query, limits)
    const request = parseCaptureRequest(text, { path: ctx.path, query, maxEventBytes: config.server.eventLimitBytes })
    const project = await projects.byApiToken(request.token)
    if (!project)
      throw httpError('invalid_api_key', 'the project API key is not valid: no project has this key', 'api_key')
    ctx.state.projectId = project.id
    const retryAfter = rateLimiter?.take(project.id, request.events.length)
    if (retryAfter !== undefined) {
      ctx.set('Retry-After', String(retryAfter))
      throw rateLimited(retryAfter)
    }
    await pipeline.ingest({
      project,
      events: request.events,
      receivedAt,
      sentAt: request.sentAt,
      ip: ctx.ip || undefined,
      historicalMigration: request.historicalMigration,
    })
    ctx.status = 200
    ctx.body = { status: 1 }
  }
}

export function mountCapture(router: Router, deps: CaptureDeps): void {
  const handler = captureHandler(deps)
  for (const path of CAPTURE_PATHS) {
    // browsers post events cross-origin
    router.get(path, crossOrigin, handler).post(path, crossOrigin, handler)
    router.get(`${path}/`, crossOrigin, handler).post(`${path}/`, crossOrigin, handler)
  }
}
