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
