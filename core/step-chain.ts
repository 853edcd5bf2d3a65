/**
 * Runs one event through the step taps, as the engine planned them from the phase table: steps in
 * table order, taps in tapable's order, waterfall results (undefined keeps the value, anything else
 * replaces it), a dropped value ends the event, and each tap's failure policy and deadline.
 *
 * An event is one promise and a small state machine: a tap costs its own promise and one `then`,
 * and a tap that answers synchronously costs nothing more. (tapable's compiled hook with a policy
 * wrapper around each tap made about eight promises per tap, kept alive while a step waited on the
 * database: half the service's allocations in the capture benchmark.)
 */
import type { EventContext, IngestEvent, StepValue } from './plugin-api.ts'
import { isDropped } from './plugin-api.ts'
import type { RegisteredTap, StepName } from './hooks.ts'
import { stepFailure } from './isolation.ts'
import type { FailureReport, RunnableTap } from './isolation.ts'
import { arm, disarm, timeoutError } from './deadlines.ts'
import type { Deadline } from './deadlines.ts'

/** An interceptor added with tapable's `hook.intercept`: the engine calls the parts that observe calls. */
export interface Interceptor {
  call?(...args: unknown[]): void
  tap?(tap: RegisteredTap): void
  result?(result: unknown): void
  error?(error: Error): void
  done?(): void
}

/** One step hook as the engine runs it. */
export interface StepPlan {
  readonly hook: StepName
  readonly policy: 'fail' | 'skip'
  readonly taps: readonly RunnableTap[]
  /** How long each of its taps may take; undefined for no limit. */
  readonly timeoutMs: number | undefined
  /** Its interceptors that observe calls (call, tap, result, error); undefined in the common case, where they cost nothing. */
  readonly observers: readonly Interceptor[] | undefined
}

/** Where the chain ended: the final value, and the step that dropped the event if it was dropped. */
export interface ChainOutcome {
  readonly value: StepValue
  readonly droppedBy?: StepName
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'

export class StepChain {
  constructor(
    private readonly steps: readonly StepPlan[],
    private readonly report: FailureReport,
  ) {}

  run(event: IngestEvent, ctx: EventContext): Promise<ChainOutcome> {
    return new Promise<ChainOutcome>((resolve, reject) =>
      new EventRun(this.steps, event, ctx, this.report, resolve, reject).start(),
    )
  }
}

/**
 * One event's walk through the taps. It is its own deadline entry from its first asynchronous tap
 * to its end, its deadline moved forward at each tap (cheaper than entering and leaving the
 * armed runs per tap; the sweeper cannot run while a tap answers synchronously).
 */
class EventRun implements Deadline {
  deadline = 0
  previous: Deadline | null = null
  next: Deadline | null = null
  private armed = false
  private step = 0
  private tap = 0
  /** The value after the previous step: what a step that ends in null or undefined leaves. */
  private value: StepValue
  /** The waterfall value inside the current step. */
  private current: unknown
  /** Bumped when a tap expires, so the handlers listening to it are retired. */
  private generation = 0
  private onResult!: (result: unknown) => void
  private onError!: (cause: unknown) => void

  constructor(
    private readonly steps: readonly StepPlan[],
    event: IngestEvent,
    private readonly ctx: EventContext,
    private readonly report: FailureReport,
    private readonly resolve: (outcome: ChainOutcome) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.value = event
    this.current = event
    this.listen()
  }

  start(): void {
    try {
      this.enter()
    } catch (error) {
      return this.fail(error)
    }
    this.advance()
  }

  /** Calls taps until one answers asynchronously or the chain ends. */
  private advance(): void {
    try {
      for (;;) {
        const plan = this.steps[this.step]!
        if (this.tap < plan.taps.length && !isDropped(this.current)) {
          const step = plan.taps[this.tap]!
          if (plan.observers) for (const observer of plan.observers) observer.tap?.(step.source)
          let result: unknown
          try {
            result = callStep(step, this.current, this.ctx)
          } catch (cause) {
            if (!this.failed(cause)) return
            continue
          }
          if (!isThenable(result)) {
            this.accept(result)
            continue
          }
          this.armUntil(plan.timeoutMs)
          result.then(this.onResult, this.onError)
          return
        }
        this.value = (this.current ?? this.value) as StepValue
        if (plan.observers) for (const observer of plan.observers) observer.result?.(this.value)
        if (isDropped(this.value)) return this.finish({ value: this.value, droppedBy: plan.hook })
        if (++this.step === this.steps.length) return this.finish({ value: this.value })
        this.tap = 0
        this.current = this.value
        this.enter()
      }
    } catch (error) {
      this.fail(error)
    }
  }

  /** Tells the interceptors of the step being entered that it is called. */
  private enter(): void {
    const { observers } = this.steps[this.step]!
    if (observers) for (const observer of observers) observer.call?.(this.current, this.ctx)
  }

  /** Gives the pending tap its deadline, or none. */
  private armUntil(ms: number | undefined): void {
    if (ms === undefined) {
      if (this.armed) disarm(this)
      this.armed = false
    } else if (this.armed) this.deadline = performance.now() + ms
    else {
      arm(this, ms)
      this.armed = true
    }
  }

  private finish(outcome: ChainOutcome): void {
    if (this.armed) disarm(this)
    this.resolve(outcome)
  }

  private fail(error: unknown): void {
    if (this.armed) disarm(this)
    const { observers } = this.steps[this.step]!
    if (observers) for (const observer of observers) observer.error?.(error as Error)
    this.reject(error)
  }

  /** The tap ran past its deadline: its answer, whenever it comes, is ignored. */
  expire(): void {
    this.armed = false // the sweeper took it out of the armed runs
    const plan = this.steps[this.step]!
    this.listen()
    if (this.failed(timeoutError(plan.taps[this.tap]!.label, plan.timeoutMs!))) this.advance()
  }

  /** Fresh handlers for the pending tap; those of an expired tap stop having any effect. */
  private listen(): void {
    const generation = ++this.generation
    this.onResult = (result) => {
      if (generation !== this.generation) return
      this.accept(result)
      this.advance()
    }
    this.onError = (cause) => {
      if (generation !== this.generation) return
      if (this.failed(cause)) this.advance()
    }
  }

  /** tapable's waterfall: an undefined result keeps the value, anything else replaces it. */
  private accept(result: unknown): void {
    if (result !== undefined) this.current = result
    this.tap++
  }

  /** Applies the step's policy to its current tap; true when the chain goes on (skip), false when it failed the event. */
  private failed(cause: unknown): boolean {
    const plan = this.steps[this.step]!
    const error = stepFailure(plan.taps[this.tap]!, plan.policy, cause, this.report)
    if (error) {
      this.fail(error)
      return false
    }
    this.tap++
    return true
  }
}

/** `callTap` (isolation.ts) for a step's two arguments, without the array and spread it would cost per tap. */
function callStep(step: RunnableTap, value: unknown, ctx: EventContext): unknown {
  if (step.type !== 'async') return step.fn(value, ctx)
  return new Promise((resolve, reject) =>
    step.fn(value, ctx, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result))),
  )
}
