/**
 * The error catalogue lives in the plugin contract (`core/plugin-api.ts`) so that plugins, built-in
 * or third-party, throw the same errors the core does; the core's own files import it from here.
 */
export {
  HttpError,
  httpError,
  tooLarge,
  isRetryable,
} from './plugin-api.ts'
