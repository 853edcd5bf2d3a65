/**
 * The error catalogue lives in the plugin contract (`core/plugin-api.ts`) so that plugins, built-in
 * or third-party, throw the same errors the core does; the core's own files import it from here.
 */
export {
  ERROR_CATALOGUE,
  HttpError,
  httpError,
  retryableError,
  badRequest,
  unauthorized,
  tooLarge,
  unavailable,
  isRetryable,
  type ErrorCode,
  type ErrorType,
  type ErrorBody,
} from './plugin-api.ts'
