/**
 * The one runner of every hook. tapable registers the taps (core/hooks.ts); once every plugin's
 * setup is done, `Engine.build` reads each hook's `taps` (tapable's resolved order: by stage, then
 * by registration) and its interceptors, and runs them by the phase table: the steps per event
 * (step-chain.ts), the sinks per request, the lifecycle hooks at boot and the observers, each with
 * its failure policy (isolation.ts) and, where the table says so, `pipeline.stepTimeoutMs`.
 */
import type Router from '@koa/router'
import type { Hook } from 'tapable'
import type { Dropped, EventContext, IngestEvent, IngestHooks, SinkBatch, StepInfo } from './plugin-api.ts'
import { PHASES, STEPS } from './hooks.ts'
import type { HookName, RegisteredTap } from './hooks.ts'
import { callTap, callTapAsync, observerFailure, sinkFailure } from './isolation.ts'
import type { RunnableTap, SinkOutcome } from './isolation.ts'
import { StepChain } from './step-chain.ts'
import type { ChainOutcome, Interceptor, StepPlan } from './step-chain.ts'
import { withDeadline } from './deadlines.ts'

export interface EngineOptions {
  /** How long each step or sink tap may take (`pipeline.stepTimeoutMs`). */
  readonly stepTimeoutMs: number
}

/** Per hook, in table order, the ids of the plugins that tapped it, in the order their taps run. */
export type TapOrder = { readonly [K in HookName]: readonly string[] }

/** The hooks the table makes observers: what `observe` runs is checked against it. */
type ObserverName = Extract<(typeof PHASES)[number], { policy: 'observe' }>['hook']

const SINK = PHASES.find((phase) => phase.kind === 'sink')!

interface Planned {
  readonly taps: readonly RunnableTap[]
  readonly observers: readonly Interceptor[]
}

const OBSERVING = ['call', 'tap', 'result', 'error', 'done'] as const

function plan(hooks: IngestHooks, name: HookName): Planned {
  const hook = hooks[name] as unknown as Hook<unknown, unknown>
  const taps = hook.taps.map((source: RegisteredTap): RunnableTap => {
    if (!source.owner) throw new Error(`a tap on ${name} has no plugin: taps are made through a plugin's api.hooks`)
    return {
      type: source.type,
      fn: source.fn as RunnableTap['fn'],
      owner: source.owner,
      hookName: name,
      label: `${source.owner.id} in ${name}`,
      source,
    }
  })
  const observers = (hook.interceptors as Interceptor[]).filter((interceptor) =>
    OBSERVING.some((key) => interceptor[key]),
  )
  return { taps, observers }
}

export class Engine {
  /** The resolved order of every tap, as the service logs it at start. */
  readonly order: TapOrder
  private readonly chain: StepChain
  private readonly plans: { readonly [K in HookName]: Planned }

  private constructor(
    hooks: IngestHooks,
    private readonly options: EngineOptions,
  ) {
    const plans = {} as Record<HookName, Planned>
    const order = {} as Record<HookName, readonly string[]>
    for (const { hook } of PHASES) {
      plans[hook] = plan(hooks, hook)
      order[hook] = plans[hook].taps.map((tap) => tap.owner.id)
    }
    this.plans = plans
    this.order = order
    const steps = STEPS.map(
      ({ hook, policy, timed }): StepPlan => ({
        hook,
        policy,
        timeoutMs: timed ? options.stepTimeoutMs : undefined,
        taps: plans[hook].taps,
        observers: plans[hook].observers.length ? plans[hook].observers : undefined,
      }),
    )
    this.chain = new StepChain(steps, (info) => this.stepFailed(info))
  }

  /** Built once, when every plugin is set up: taps are refused after that, so the plan never changes. */
  static build(hooks: IngestHooks, options: EngineOptions): Engine {
    return new Engine(hooks, options)
  }

  /** One event through every step; rejects with the StepError of a tap whose policy is fail. */
  runEvent(event: IngestEvent, ctx: EventContext): Promise<ChainOutcome> {
    return this.chain.run(event, ctx)
  }

  /** Every sink at once, each isolated and timed; resolves with each sink's outcome, in completion order. */
  async runSinks(batch: SinkBatch): Promise<SinkOutcome[]> {
    const { taps, observers } = this.plans.sink
    for (const observer of observers) observer.call?.(batch)
    const outcomes: SinkOutcome[] = []
    await Promise.all(taps.map((tap) => this.runSink(tap, batch, outcomes, observers)))
    for (const observer of observers) observer.done?.()
    return outcomes
  }

  private async runSink(
    tap: RunnableTap,
    batch: SinkBatch,
    outcomes: SinkOutcome[],
    observers: readonly Interceptor[],
  ): Promise<void> {
    for (const observer of observers) observer.tap?.(tap.source)
    try {
      const stored = callTapAsync(tap, [batch])
      await (SINK.timed ? withDeadline(stored, this.options.stepTimeoutMs, tap.label) : stored)
      outcomes.push({ plugin: tap.owner.id, required: tap.owner.required })
    } catch (cause) {
      outcomes.push(sinkFailure(tap, cause, (info) => this.stepFailed(info)))
    }
  }

  /** Boot: each plugin mounts its routes; a throw stops boot. */
  mountRoutes(router: Router): void {
    for (const tap of this.notify('routes', [router])) callTap(tap, [router])
  }

  /** Boot: the `ready` taps one after another; a failure stops boot. */
  async ready(): Promise<void> {
    for (const tap of this.notify('ready', [])) await callTapAsync(tap, [])
  }

  /** Shutdown has begun: the service stops accepting requests. */
  closing(): void {
    this.observe('closing', [])
  }

  eventDropped(dropped: Dropped, ctx: EventContext): void {
    this.observe('eventDropped', [dropped, ctx])
  }

  stepFailed(info: StepInfo): void {
    this.observe('stepFailed', [info])
  }

  private observe(name: ObserverName, args: unknown[]): void {
    for (const tap of this.notify(name, args)) {
      try {
        callTap(tap, args)
      } catch (cause) {
        observerFailure(tap, cause)
      }
    }
  }

  /** The hook's taps, once its interceptors that observe calls were told of this one. */
  private *notify(name: HookName, args: unknown[]): Generator<RunnableTap> {
    const { taps, observers } = this.plans[name]
    for (const observer of observers) observer.call?.(...args)
    for (const tap of taps) {
      for (const observer of observers) observer.tap?.(tap.source)
      yield tap
    }
  }
}
