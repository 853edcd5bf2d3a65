/**
 * Every error a client can see is an HttpError: a status, a JSON body of the shape
 * `{type, code, detail, attr}`, and whether the client should retry.
 */
export type ErrorType = 'validation_error' | 'authentication_error' | 'server_error'

export interface ErrorBody {
  type: ErrorType
  code: string
  detail: string
  attr: string | null
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
  ) {
    super(detail)
    this.name = 'HttpError'
  }

  get retryable(): boolean {
    return this.status === 503 || this.status === 429
  }

  toBody(): ErrorBody {
    return { type: this.type, code: this.code, detail: this.detail, attr: this.attr }
  }
}

export const badRequest = (code: string, detail: string, attr: string | null = null) =>
  new HttpError(400, 'validation_error', code, detail, attr)

export const unauthorized = (code: string, detail: string, attr: string | null = null) =>
  new HttpError(401, 'authentication_error', code, detail, attr)

export const tooLarge = (detail: string) => new HttpError(413, 'validation_error', 'payload_too_large', detail)

export const unavailable = (detail: string) => new HttpError(503, 'server_error', 'unavailable', detail)

/** Driver errors that mean "the database is unreachable right now", as opposed to a bad request. */
const TRANSIENT_DRIVER_ERRORS = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoTopologyClosedError',
  'MongoNotConnectedError',
  'MongoPoolClearedError',
  'MongoWriteConcernError',
  'MongoOperationTimeoutError',
])

/**
 * Whether the client should retry the request: the database is unreachable, a step timed out, or
 * an HttpError said so. Everything else is a property of the request and would fail again.
 */
export function isRetryable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  if (error instanceof HttpError) return error.retryable
  const e = error as { name?: unknown; retryable?: unknown; cause?: unknown; hasErrorLabel?: (label: string) => boolean }
  if (e.retryable === true) return true
  if (typeof e.name === 'string' && TRANSIENT_DRIVER_ERRORS.has(e.name)) return true
  if (typeof e.hasErrorLabel === 'function' && (e.hasErrorLabel('RetryableWriteError') || e.hasErrorLabel('ResetPool'))) return true
  return e.cause !== undefined && e.cause !== error && isRetryable(e.cause)
}
