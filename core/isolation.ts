/**
 * The one place where step failure policies live (design.md §2). A `register` interceptor on every
 * hook replaces each tap's function with an async wrapper, because a raw promise tap that throws
 * synchronously after the first tap makes tapable's promise hang forever (models.md §3).
 */
import type { Hook } from 'tapable'
import type { Logger } from 'pino'
import type { SinkBatch, StepInfo } from './plugin-api.ts'
import { isDropped } from './plugin-api.ts'
import { HttpError, isRetryable } from './errors.ts'
import { count } from './metrics.ts'
import { timeoutError, withDeadline } from './deadlines.ts'

/** skip: log and keep the event; fail: re-throw to the pipeline; isolate: record, never reject. */
export type FailurePolicy = 'skip' | 'fail' | 'isolate' | 'observe' | 'boot'

/** The plugin whose `setup` is running; taps made at any other time are refused. */
export interface TapOwner {
  readonly id: string
  readonly required: boolean
  readonly logger: Logger
  readonly tapped: string[]
}

export interface IsolationState {
  owner?: TapOwner
  stepTimeoutMs: number
  onStepFailed(info: StepInfo): void
}

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

export class TapOutsideSetupError extends Error {
  readonly code = 'INGEST_ERR_TAP_OUTSIDE_SETUP'
}

export interface SinkOutcome {
  readonly plugin: string
  readonly required: boolean
  readonly error?: Error
}

const sinkOutcomes = new WeakMap<SinkBatch, SinkOutcome[]>()

/** Outcomes of every sink for one batch, in completion order. */
export function outcomesOf(batch: SinkBatch): readonly SinkOutcome[] {
  return sinkOutcomes.get(batch) ?? []
}

type AnyFn = (...args: unknown[]) => unknown
interface RegisteredTap {
  name: string
  type: 'sync' | 'async' | 'promise'
  fn: AnyFn
}

/** A plugin's tap on a step hook as the plugin made it, with what its failures need. */
export interface StepTap {
  readonly type: RegisteredTap['type']
  readonly fn: AnyFn
  readonly owner: TapOwner
  readonly hookName: string
  readonly policy: FailurePolicy
  /** "<plugin> in <hook>", for timeout messages. */
  readonly label: string
}

const stepTaps = new WeakMap<object, StepTap>()

/** The plugin's own tap behind a wrapped step tap (an entry of `hook.taps`), if it is one. */
export function stepTapOf(wrapped: object): StepTap | undefined {
  return stepTaps.get(wrapped)
}

/**
 * Applies the failure policy of a step tap that threw, rejected or timed out: counts and reports
 * the failure, then answers the StepError to fail with (policy fail), or undefined when the event
 * goes on unchanged (policy skip, logged).
 */
export function stepFailure(step: StepTap, cause: unknown, state: IsolationState): StepError | undefined {
  const { owner, hookName } = step
  const error = new StepError(owner.id, hookName, cause, isRetryable(cause))
  count('hedgerow_plugin_errors_total', { plugin: owner.id, hook: hookName })
  state.onStepFailed({ plugin: owner.id, hook: hookName, error, retryable: error.retryable })
  if (step.policy !== 'skip') return error
  owner.logger.warn({ err: cause, hook: hookName }, 'step failed; event kept unchanged')
  return undefined
}

/** The timeout cause of a step tap that ran past `ms`. */
export function stepTimeout(step: StepTap, ms: number): Error {
  return timeoutError(step.label, ms)
}

function asPromise(tap: Pick<RegisteredTap, 'type' | 'fn'>, args: unknown[]): Promise<unknown> {
  if (tap.type !== 'async') return Promise.resolve().then(() => tap.fn(...args))
  return new Promise((resolve, reject) =>
    tap.fn(...args, (err: unknown, result: unknown) => (err ? reject(err) : resolve(result))),
  )
}

/** Installs the policy wrapper on one hook. */
export function isolate(
  hook: Hook<unknown, unknown>,
  hookName: string,
  policy: FailurePolicy,
  state: IsolationState,
): void {
  hook.intercept({
    register(registered) {
      const owner = state.owner
      if (!owner) throw new TapOutsideSetupError(`a tap on ${hookName} was made outside a plugin's setup`)
      const tap = registered as unknown as RegisteredTap
      owner.tapped.push(hookName)
      const wrapped = { ...tap, name: owner.id }
      if (policy === 'boot') {
        if (tap.type !== 'sync')
          Object.assign(wrapped, { type: 'promise', fn: (...args: unknown[]) => asPromise(tap, args) })
        return wrapped as typeof registered
      }
      if (policy === 'observe') {
        wrapped.type = 'sync'
        wrapped.fn = (...args: unknown[]) => {
          try {
            tap.fn(...args)
          } catch (error) {
            owner.logger.error({ err: error, hook: hookName }, 'observer failed')
          }
        }
        return wrapped as typeof registered
      }
      wrapped.type = 'promise'
      if (policy === 'isolate') wrapped.fn = sinkRunner(tap, owner, hookName, state)
      else {
        const step: StepTap = {
          type: tap.type,
          fn: tap.fn,
          owner,
          hookName,
          policy,
          label: `${owner.id} in ${hookName}`,
        }
        stepTaps.set(wrapped, step)
        wrapped.fn = stepRunner(step, state)
      }
      return wrapped as typeof registered
    },
  })
}

/**
 * The tap as tapable runs it when a step hook's `promise()` is called directly. The pipeline does
 * not go through it: it drives the step taps itself (step-chain.ts), with the same rules.
 */
function stepRunner(step: StepTap, state: IsolationState): AnyFn {
  return async function runStep(...args: unknown[]) {
    if (isDropped(args[0])) return args[0]
    try {
      return await withDeadline(asPromise(step, args), state.stepTimeoutMs, step.label, () =>
        stepTimeout(step, state.stepTimeoutMs),
      )
    } catch (cause) {
      const error = stepFailure(step, cause, state)
      if (error) throw error
      return undefined
    }
  }
}

function sinkRunner(tap: RegisteredTap, owner: TapOwner, hookName: string, state: IsolationState): AnyFn {
  return async function runSink(batch: unknown) {
    const outcomes = sinkOutcomes.get(batch as SinkBatch) ?? []
    sinkOutcomes.set(batch as SinkBatch, outcomes)
    try {
      await withDeadline(asPromise(tap, [batch]), state.stepTimeoutMs, `${owner.id} in ${hookName}`)
      outcomes.push({ plugin: owner.id, required: owner.required })
    } catch (cause) {
      const error = cause instanceof Error ? cause : new Error(String(cause))
      outcomes.push({ plugin: owner.id, required: owner.required, error })
      count('hedgerow_sink_errors_total', { plugin: owner.id })
      // A sink's HttpError that is not retryable is the request's fault (an event too large to store), not the sink's.
      const refused = error instanceof HttpError && !error.retryable
      if (refused) owner.logger.warn({ err: error, required: owner.required }, 'sink refused the request')
      else owner.logger.error({ err: error, required: owner.required }, 'sink failed')
      state.onStepFailed({ plugin: owner.id, hook: hookName, error, retryable: !refused })
    }
  }
}
