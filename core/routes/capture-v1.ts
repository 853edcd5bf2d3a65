/**
 * `POST /i/v1/analytics/events`: PostHog's capture v1 protocol (core/capture/v1.ts), through the
 * same pipeline as every other capture path. Errors use v1's body `{error, error_description,
 * error_uri}`, which posthog-python reads; an event the pipeline could not store for a passing
 * reason is answered `retry`, as PostHog's capture does, and the SDK resends only those.
 */
import type Router from '@koa/router'
import type { Context } from 'koa'
import { HttpError, isRetryable, httpError } from '../errors.ts'
import { readBody } from '../http/read-body.ts'
import { rateLimited, rateLimiterFor } from '../http/rate-limit.ts'
import { decompressBounded } from '../capture/decode.ts'
import { parseJson } from '../capture/request.ts'
import { readV1Batch, readV1Headers, v1Encoding } from '../capture/v1.ts'
import type { CaptureDeps } from './capture.ts'

export const CAPTURE_V1_PATH = '/i/v1/analytics/events'
const ERROR_URI = 'https://posthog.com/docs/api'
/** Seconds, as PostHog's capture sends with a retry. */
const RETRY_AFTER = '1'

export function captureV1Handler({ config, projects, pipeline }: CaptureDeps) {
  const rateLimiter = rateLimiterFor(config.rateLimit)
  return async function captureV1(ctx: Context): Promise<void> {
    const receivedAt = new Date()
    try {
      const request = readV1Headers((name) => ctx.get(name))
      const encoding = v1Encoding(ctx.get('Content-Encoding'))
      const project = await projects.byApiToken(request.token)
      if (!project) throw httpError('invalid_api_token', 'the provided API token is not valid: no project has this key')
      ctx.state.projectId = project.id
      const raw = await readBody(ctx.req, config.server.bodyLimitBytes)
      if (raw.length === 0) throw httpError('empty_body', 'request body is empty')
      const bytes = encoding ? await decompressBounded(encoding, raw, config.server.decodedLimitBytes) : raw
      const batch = readV1Batch(parseJson(bytes.toString('utf8')), request, config.server.eventLimitBytes)
      const retryAfter = rateLimiter?.take(project.id, batch.events.length)
      if (retryAfter !== undefined) {
        ctx.set('Retry-After', String(retryAfter))
        throw rateLimited(retryAfter)
      }
      if (batch.events.length > 0) {
        try {
          await pipeline.ingest({
            project,
            events: batch.events,
            receivedAt,
            sentAt: request.sentAt,
            ip: ctx.ip || undefined,
            historicalMigration: batch.historicalMigration,
          })
        } catch (error) {
          if (!isRetryable(error)) throw error
          for (const event of batch.events)
            batch.results.set(String(event.uuid).toLowerCase(), { result: 'retry', details: 'not_persisted' })
          ctx.set('Retry-After', RETRY_AFTER)
        }
      }
      ctx.status = 200
      ctx.body = { results: Object.fromEntries(batch.results) }
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      if (error.status === 503) ctx.set('Retry-After', RETRY_AFTER)
      if (error.status === 413) ctx.set('Connection', 'close')
      ctx.status = error.status
      ctx.body = { error: error.code, error_description: error.detail, error_uri: ERROR_URI }
    }
  }
}

export function mountCaptureV1(router: Router, deps: CaptureDeps): void {
  router.post(CAPTURE_V1_PATH, captureV1Handler(deps))
}
