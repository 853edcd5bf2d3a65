/**
 * First middleware: times the request, turns every error into the JSON error body, and writes one
 * log line per request (method, path, status, ms, project).
 */
import type { Middleware } from 'koa'
import type { Logger } from 'pino'
import { HttpError, httpError } from '../errors.ts'
import { count } from '../metrics.ts'

/** The request counter's labels per status, one frozen object each, so the counter's key is built once per status. */
const statusLabels = new Map<number, Readonly<{ status: string }>>()
function labelsOf(status: number): Readonly<{ status: string }> {
  let labels = statusLabels.get(status)
  if (!labels) statusLabels.set(status, (labels = Object.freeze({ status: String(status) })))
  return labels
}

export function errorsAndAccessLog(logger: Logger): Middleware {
  return async function handleErrors(ctx, next) {
    const started = performance.now()
    try {
      await next()
      if (ctx.status === 404 && ctx.body === undefined) {
        throw httpError('not_found', `no route for ${ctx.method} ${ctx.path}`)
      }
    } catch (error) {
      const known = error instanceof HttpError ? error : toHttpError(error)
      ctx.status = known.status
      ctx.body = known.toBody()
      // The unread rest of a refused body would be parsed as the next request on a kept-alive
      // connection; closing it makes the client's next request start on a clean one.
      if (known.status === 413) ctx.set('Connection', 'close')
      if (known.status >= 500) logger.error({ err: error, path: ctx.path }, 'request failed')
    } finally {
      const ms = Math.round((performance.now() - started) * 10) / 10
      count('hedgerow_http_requests_total', labelsOf(ctx.status))
      logger.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms, project: ctx.state.projectId },
        'request',
      )
    }
  }
}

/**
 * A 4xx thrown by the HTTP framework itself (a body parser's 413) becomes the catalogue's
 * `payload_too_large` or `invalid_request`; anything else is a 500.
 */
function toHttpError(error: unknown): HttpError {
  const e = error as { status?: number; expose?: boolean; message?: string }
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    const detail = e.expose && e.message ? e.message : 'the request is invalid'
    return httpError(e.status === 413 ? 'payload_too_large' : 'invalid_request', detail)
  }
  return httpError('internal_error', 'an internal error occurred; it has been logged')
}
