/**
 * The failure policies of the phase table (core/hooks.ts), applied by the engine to a tap that
 * threw, rejected or timed out: what is counted, reported to `stepFailed`, logged, and what the
 * caller sees. One place, whatever the hook.
 */
import type { StepInfo } from './plugin-api.ts'
import { HttpError, isRetryable } from './errors.ts'
import { count } from './metrics.ts'
import type { RegisteredTap, TapOwner } from './hooks.ts'

export class StepError extends Error {
  constructor(
    readonly plugin: string,
    readonly hook: string,
    readonly cause: unknown,
    readonly retryable: boolean,
  ) {
    super(`${plugin} failed in ${hook}: ${cause instanceof Error ? cause.message : String(cause)}`)
    this.name = 'StepError'
  }
}

/** How one sink fared with one batch. */
export interface SinkOutcome {
  readonly plugin: string
  readonly required: boolean
  readonly error?: Error
}

type AnyFn = (...args: unknown[]) => unknown

/** A plugin's tap, ready to run: what it is, and what its failures need. */
export interface RunnableTap {
  readonly type: 'sync' | 'async' | 'promise'
  readonly fn: AnyFn
  readonly owner: TapOwner
  readonly hookName: string
  /** "<plugin> in <hook>", for timeout messages. */
  readonly label: string
  /** The entry of `hook.taps` it came from, for interceptors that observe taps. */
  readonly source: RegisteredTap
}

/** Reports a failure to the `stepFailed` observers. */
export type FailureReport = (info: StepInfo) => void

/**
 * Calls a tap the way tapable would for its kind: sync, callback (tapAsync) or promise. A promise
 * tap may answer a plain value; a throw is the caller's to catch.
 */
export function callTap(tap: RunnableTap, args: readonly unknown[]): unknown {
  if (tap.type !== 'async') return tap.fn(...args)
  return new Promise((resolve, reject) =>
    tap.fn(...args, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result))),
  )
}

/** `callTap` as a promise, a synchronous throw included. */
export function callTapAsync(tap: RunnableTap, args: readonly unknown[]): Promise<unknown> {
  return Promise.resolve().then(() => callTap(tap, args))
}

/**
 * Policies fail and skip, of a step tap: counts and reports the failure, then answers the StepError
 * to fail the event with (fail), or undefined when the event goes on unchanged (skip, logged).
 */
export function stepFailure(
  tap: RunnableTap,
  policy: 'fail' | 'skip',
  cause: unknown,
  report: FailureReport,
): StepError | undefined {
  const { owner, hookName } = tap
  const error = new StepError(owner.id, hookName, cause, isRetryable(cause))
  count('hedgerow_plugin_errors_total', { plugin: owner.id, hook: hookName })
  report({ plugin: owner.id, hook: hookName, error, retryable: error.retryable })
  if (policy === 'fail') return error
  owner.logger.warn({ err: cause, hook: hookName }, 'step failed; event kept unchanged')
  return undefined
}

/** Policy isolate, of a sink tap: the failure is this sink's alone, recorded in its outcome. */
export function sinkFailure(tap: RunnableTap, cause: unknown, report: FailureReport): SinkOutcome {
  const { owner, hookName } = tap
  const error = cause instanceof Error ? cause : new Error(String(cause))
  count('hedgerow_sink_errors_total', { plugin: owner.id })
  // A sink's HttpError that is not retryable is the request's fault (an event too large to store), not the sink's.
  const refused = error instanceof HttpError && !error.retryable
  if (refused) owner.logger.warn({ err: error, required: owner.required }, 'sink refused the request')
  else owner.logger.error({ err: error, required: owner.required }, 'sink failed')
  report({ plugin: owner.id, hook: hookName, error, retryable: !refused })
  return { plugin: owner.id, required: owner.required, error }
}

/** Policy observe: an observer's failure is logged and never reaches the caller. */
export function observerFailure(tap: RunnableTap, cause: unknown): void {
  tap.owner.logger.error({ err: cause, hook: tap.hookName }, 'observer failed')
}
