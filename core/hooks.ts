/**
 * The phase table: every hook, when the core runs it, its kind and what a failing tap does. It is
 * the one place that says what runs in which order (design.md §2); `core/engine.ts` runs the hooks
 * by it. Within one hook, taps run by their `stage` (the `Stage` constants of the plugin contract),
 * then in the order the config lists their plugins.
 *
 * tapable only registers the taps here: a `register` interceptor refuses a tap made outside a
 * plugin's setup, forces its name to the plugin id and records its owner on the tap. Plugins get
 * tap-only views of the hooks, so none can run a hook itself.
 */
import { AsyncParallelHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from 'tapable'
import type { Hook } from 'tapable'
import type { Logger } from 'pino'
import type { IngestHooks, PluginHooks } from './plugin-api.ts'

/**
 * What a failing (throwing, rejecting or timed-out) tap does:
 * - fail: the event fails: a retryable cause answers 503, any other dead-letters the event;
 * - skip: logged, the event goes on as the tap received it;
 * - isolate: recorded for that sink alone; a `required` sink failing answers 503;
 * - boot: the service does not start;
 * - observe: logged and ignored.
 */
export type FailurePolicy = 'fail' | 'skip' | 'isolate' | 'boot' | 'observe'

export interface Phase {
  readonly hook: keyof IngestHooks
  /** step: waterfall over each event; sink: parallel, once per request; lifecycle and observer: called by the core. */
  readonly kind: 'lifecycle' | 'step' | 'sink' | 'observer'
  /** The tapable class that registers its taps: a sync one takes `tap` only. */
  readonly tapable: keyof typeof TAPABLE
  /** The arguments its taps receive. */
  readonly args: readonly string[]
  readonly policy: FailurePolicy
  /** Whether each tap must answer within `pipeline.stepTimeoutMs` (a timeout is a retryable failure). */
  readonly timed: boolean
}

// tapable types `args` as a tuple of the hook's arity; the table's `args` are checked by the tests instead.
type HookClass = new (args: never, name: string) => object
const TAPABLE: Readonly<
  Record<'SyncHook' | 'AsyncSeriesHook' | 'AsyncSeriesWaterfallHook' | 'AsyncParallelHook', HookClass>
> = {
  SyncHook,
  AsyncSeriesHook,
  AsyncSeriesWaterfallHook,
  AsyncParallelHook,
}
const EVENT = ['event', 'context']

/** Every hook, in the order of a service's life: boot, then each event's steps and sinks, then shutdown. */
export const PHASES = [
  /** Mount HTTP routes, once after every setup. */
  { hook: 'routes', kind: 'lifecycle', tapable: 'SyncHook', args: ['router'], policy: 'boot', timed: false },
  /** Every plugin is set up and routes are mounted; the server is about to listen. */
  { hook: 'ready', kind: 'lifecycle', tapable: 'AsyncSeriesHook', args: [], policy: 'boot', timed: false },
  /** Per-event rules (name, distinct_id, uuid, timestamps); the normalised event or `drop(reason)`. */
  { hook: 'validate', kind: 'step', tapable: 'AsyncSeriesWaterfallHook', args: EVENT, policy: 'fail', timed: true },
  /** `$geoip_*` properties from the client IP. */
  { hook: 'geoip', kind: 'step', tapable: 'AsyncSeriesWaterfallHook', args: EVENT, policy: 'skip', timed: true },
  /** Finds or creates the person, applies merges. */
  { hook: 'aliasResolve', kind: 'step', tapable: 'AsyncSeriesWaterfallHook', args: EVENT, policy: 'fail', timed: true },
  /** `$set` / `$set_once` / `$unset`. */
  { hook: 'personUpdate', kind: 'step', tapable: 'AsyncSeriesWaterfallHook', args: EVENT, policy: 'fail', timed: true },
  /** Upserts groups and adds group properties. */
  { hook: 'groupUpdate', kind: 'step', tapable: 'AsyncSeriesWaterfallHook', args: EVENT, policy: 'fail', timed: true },
  /** Adds flag properties. */
  {
    hook: 'flagAttribution',
    kind: 'step',
    tapable: 'AsyncSeriesWaterfallHook',
    args: EVENT,
    policy: 'skip',
    timed: true,
  },
  /** The request's surviving events, once, after every step. */
  { hook: 'sink', kind: 'sink', tapable: 'AsyncParallelHook', args: ['batch'], policy: 'isolate', timed: true },
  /** An event was dropped on purpose. */
  {
    hook: 'eventDropped',
    kind: 'observer',
    tapable: 'SyncHook',
    args: ['dropped', 'context'],
    policy: 'observe',
    timed: false,
  },
  /** A tap failed; the policy of its hook has been applied. */
  { hook: 'stepFailed', kind: 'observer', tapable: 'SyncHook', args: ['info'], policy: 'observe', timed: false },
  /** The service stops accepting requests: end responses that never end on their own. */
  { hook: 'closing', kind: 'observer', tapable: 'SyncHook', args: [], policy: 'observe', timed: false },
] as const satisfies ReadonlyArray<Phase>

type StepPhase = Extract<(typeof PHASES)[number], { kind: 'step' }>
export type StepName = StepPhase['hook']
export type HookName = keyof IngestHooks

/** The event steps in pipeline order. */
export const STEPS: readonly StepPhase[] = PHASES.filter((phase): phase is StepPhase => phase.kind === 'step')

/** The plugin whose `setup` is running; taps made at any other time are refused. */
export interface TapOwner {
  readonly id: string
  readonly required: boolean
  readonly logger: Logger
  readonly tapped: string[]
}

/** Whose setup is running, set by the loader around each setup. */
export interface SetupScope {
  owner?: TapOwner
}

/** A tap as tapable keeps it in `hook.taps`, with the plugin that made it. */
export type RegisteredTap = Hook<unknown, unknown>['taps'][number] & { readonly owner?: TapOwner }

class TapOutsideSetupError extends Error {
  readonly code = 'INGEST_ERR_TAP_OUTSIDE_SETUP'
}

/** Builds the frozen hooks from the table, each refusing taps made outside a plugin's setup. */
export function createHooks(scope: SetupScope): IngestHooks {
  const hooks: Record<string, Hook<unknown, unknown>> = {}
  for (const { hook: name, tapable, args } of PHASES) {
    const hook = new TAPABLE[tapable]([...args] as never, name) as Hook<unknown, unknown>
    hook.intercept({
      register(tap) {
        const owner = scope.owner
        if (!owner) throw new TapOutsideSetupError(`a tap on ${name} was made outside a plugin's setup`)
        owner.tapped.push(name)
        return { ...tap, name: owner.id, owner } as typeof tap
      },
    })
    hooks[name] = hook
  }
  return Object.freeze(hooks) as unknown as IngestHooks
}

/** What a plugin sees of the hooks: their tap methods, bound to the real hooks, and nothing that runs them. */
export function tapOnly(hooks: IngestHooks): PluginHooks {
  const views: Record<string, object> = {}
  for (const { hook: name, tapable } of PHASES) {
    const hook = hooks[name] as unknown as AsyncSeriesHook<unknown>
    const tap = hook.tap.bind(hook)
    views[name] = Object.freeze(
      tapable === 'SyncHook'
        ? { tap }
        : { tap, tapAsync: hook.tapAsync.bind(hook), tapPromise: hook.tapPromise.bind(hook) },
    )
  }
  return Object.freeze(views) as unknown as PluginHooks
}
