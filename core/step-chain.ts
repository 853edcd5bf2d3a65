/**
 * Runs one event through the step hooks for the pipeline. The rules are exactly those of calling
 * each step hook's tapable `promise()` in STEPS order with the isolation wrapper in place: taps in
 * tapable's order, waterfall results (undefined keeps the value, anything else replaces it), a
 * dropped value ends the event, each tap's failure policy and deadline. What differs is the cost:
 * tapable's compiled hook, the wrapper's async function, its deadline race and the promise
 * adoptions between them made about eight promises per tap, kept alive while a step waits on the
 * database and promoted by the garbage collector (half the service's allocations in the capture
 * benchmark). Here an event is one promise and a small state machine; a tap costs its own promise
 * and one `then`, and a tap that answers synchronously costs nothing more.
 *
 * A hook with an interceptor that observes calls (call, tap, result, error, done, loop) goes
 * through tapable instead, so such an interceptor still sees every call.
 */
import type { Hook } from 'tapable'
import type { EventContext, IngestEvent, IngestHooks, StepValue } from './plugin-api.ts'
import { isDropped } from './plugin-api.ts'
import { STEPS, isolationStateOf } from './hooks.ts'
import type { StepName } from './hooks.ts'
import { stepFailure, stepTapOf, stepTimeout } from './isolation.ts'
import type { IsolationState, StepTap } from './isolation.ts'
import { arm, disarm } from './deadlines.ts'
import type { Deadline } from './deadlines.ts'

/** Where the chain ended: the final value, and the step that dropped the event if it was dropped. */
export interface ChainOutcome {
  readonly value: StepValue
  readonly droppedBy?: StepName
}

type AnyHook = Hook<unknown, unknown> & {
  interceptors: ReadonlyArray<Record<string, unknown>>
  taps: ReadonlyArray<object>
}
const OBSERVING = ['call', 'tap', 'loop', 'error', 'result', 'done'] as const

interface Plan {
  /** The `taps` arrays the plan was made from, to notice a change (tapable never removes a tap in place). */
  readonly sources: ReadonlyArray<ReadonlyArray<object>>
  readonly lengths: readonly number[]
  /** Per step, its taps; undefined when the chain must go through tapable. */
  readonly steps: ReadonlyArray<readonly StepTap[]> | undefined
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'

export class StepChain {
  private plan: Plan | undefined
  private readonly state: IsolationState | undefined

  constructor(private readonly hooks: IngestHooks) {
    this.state = isolationStateOf(hooks)
  }

  run(event: IngestEvent, ctx: EventContext): Promise<ChainOutcome> {
    const state = this.state
    const steps = state && this.currentPlan().steps
    if (!state || !steps) return this.runThroughTapable(event, ctx)
    return new Promise<ChainOutcome>((resolve, reject) =>
      new EventRun(steps, event, ctx, state, resolve, reject).advance(),
    )
  }

  private currentPlan(): Plan {
    const hooks = STEPS.map(({ hook }) => this.hooks[hook] as unknown as AnyHook)
    const plan = this.plan
    if (plan && hooks.every((hook, i) => hook.taps === plan.sources[i] && hook.taps.length === plan.lengths[i]))
      return plan
    const observed = hooks.some((hook) =>
      hook.interceptors.some((interceptor) => OBSERVING.some((key) => interceptor[key] !== undefined)),
    )
    const steps = hooks.map((hook) => hook.taps.map((tap) => stepTapOf(tap)))
    const complete = !observed && steps.every((taps) => taps.every((tap) => tap !== undefined))
    this.plan = {
      sources: hooks.map((hook) => hook.taps),
      lengths: hooks.map((hook) => hook.taps.length),
      steps: complete ? (steps as StepTap[][]) : undefined,
    }
    return this.plan
  }

  private async runThroughTapable(event: IngestEvent, ctx: EventContext): Promise<ChainOutcome> {
    let value: StepValue = event
    for (const { hook } of STEPS) {
      value = ((await this.hooks[hook].promise(value, ctx)) ?? value) as StepValue
      if (isDropped(value)) return { value, droppedBy: hook }
    }
    return { value }
  }
}

/**
 * One event's walk through the taps. It is its own deadline entry from its first asynchronous tap
 * to its end, its deadline moved forward at each tap (cheaper than entering and leaving the
 * deadline set per tap; the sweeper cannot run while a tap answers synchronously).
 */
class EventRun implements Deadline {
  deadline = 0
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
    private readonly steps: ReadonlyArray<readonly StepTap[]>,
    event: IngestEvent,
    private readonly ctx: EventContext,
    private readonly state: IsolationState,
    private readonly resolve: (outcome: ChainOutcome) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.value = event
    this.current = event
    this.listen()
  }

  /** Calls taps until one answers asynchronously or the chain ends. */
  advance(): void {
    try {
      for (;;) {
        const taps = this.steps[this.step]!
        if (this.tap < taps.length && !isDropped(this.current)) {
          const step = taps[this.tap]!
          let result: unknown
          try {
            result = call(step, this.current, this.ctx)
          } catch (cause) {
            if (!this.failed(step, cause)) return
            continue
          }
          if (!isThenable(result)) {
            this.accept(result)
            continue
          }
          if (this.armed) this.deadline = performance.now() + this.state.stepTimeoutMs
          else {
            arm(this, this.state.stepTimeoutMs)
            this.armed = true
          }
          result.then(this.onResult, this.onError)
          return
        }
        this.value = (this.current ?? this.value) as StepValue
        if (isDropped(this.value)) return this.finish({ value: this.value, droppedBy: STEPS[this.step]!.hook })
        if (++this.step === this.steps.length) return this.finish({ value: this.value })
        this.tap = 0
        this.current = this.value
      }
    } catch (error) {
      this.fail(error)
    }
  }

  private finish(outcome: ChainOutcome): void {
    if (this.armed) disarm(this)
    this.resolve(outcome)
  }

  private fail(error: unknown): void {
    if (this.armed) disarm(this)
    this.reject(error)
  }

  /** The tap ran past its deadline: its answer, whenever it comes, is ignored. */
  expire(): void {
    this.armed = false // the sweeper took it out of the set
    const step = this.steps[this.step]![this.tap]!
    this.listen()
    if (this.failed(step, stepTimeout(step, this.state.stepTimeoutMs))) this.advance()
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
      if (this.failed(this.steps[this.step]![this.tap]!, cause)) this.advance()
    }
  }

  /** tapable's waterfall: an undefined result keeps the value, anything else replaces it. */
  private accept(result: unknown): void {
    if (result !== undefined) this.current = result
    this.tap++
  }

  /** Applies the tap's policy; true when the chain goes on (skip), false when it failed the event. */
  private failed(step: StepTap, cause: unknown): boolean {
    const error = stepFailure(step, cause, this.state)
    if (error) {
      this.fail(error)
      return false
    }
    this.tap++
    return true
  }
}

/** Calls a plugin's tap the way tapable would for its kind: sync, callback (tapAsync) or promise. */
function call(step: StepTap, value: unknown, ctx: EventContext): unknown {
  if (step.type !== 'async') return step.fn(value, ctx)
  return new Promise((resolve, reject) =>
    step.fn(value, ctx, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result))),
  )
}
