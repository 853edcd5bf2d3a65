/**
 * The hooks, declared once and frozen (webpack's Compiler style). Each event runs through the step
 * hooks in the order of `STEPS`; the sink hook then receives the request's surviving events.
 */
import { AsyncParallelHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from 'tapable'
import type { Hook } from 'tapable'
import type Router from '@koa/router'
import type {
  Dropped,
  EventContext,
  IngestEvent,
  IngestHooks,
  SinkBatch,
  StepHook,
  StepInfo,
  StepResult,
} from './plugin-api.ts'
import { isolate } from './isolation.ts'
import type { FailurePolicy, IsolationState } from './isolation.ts'

const step = (name: string): StepHook =>
  new AsyncSeriesWaterfallHook<[IngestEvent, EventContext], StepResult>(['event', 'context'], name)

/** The event steps in pipeline order, each with the policy its taps get (design.md §2). */
export const STEPS = [
  /**
   * validate — Kind: waterfall, first. Applies the per-event rules (name, distinct_id, uuid,
   * timestamps) and returns the normalised event or `drop(reason)`.
   * On error: fail (retryable → 503; otherwise the event is dead-lettered and dropped).
   */
  { hook: 'validate', policy: 'fail' },
  /** geoip — Kind: waterfall. Adds `$geoip_*` properties from the client IP. On error: skip. */
  { hook: 'geoip', policy: 'skip' },
  /** aliasResolve — Kind: waterfall. Finds or creates the person, applies merges. On error: fail. */
  { hook: 'aliasResolve', policy: 'fail' },
  /** personUpdate — Kind: waterfall. Applies `$set` / `$set_once` / `$unset`. On error: fail. */
  { hook: 'personUpdate', policy: 'fail' },
  /** groupUpdate — Kind: waterfall. Upserts groups and adds group properties. On error: fail. */
  { hook: 'groupUpdate', policy: 'fail' },
  /** flagAttribution — Kind: waterfall. Adds flag properties. On error: skip. */
  { hook: 'flagAttribution', policy: 'skip' },
] as const satisfies ReadonlyArray<{ hook: keyof IngestHooks; policy: FailurePolicy }>

export type StepName = (typeof STEPS)[number]['hook']

const states = new WeakMap<IngestHooks, IsolationState>()

/** The isolation state the hooks were created with (its step timeout and failure reporting). */
export function isolationStateOf(hooks: IngestHooks): IsolationState | undefined {
  return states.get(hooks)
}

/** Builds the frozen hooks object with the isolation wrapper installed on every hook. */
export function createHooks(state: IsolationState): IngestHooks {
  const hooks: IngestHooks = {
    validate: step('validate'),
    geoip: step('geoip'),
    aliasResolve: step('aliasResolve'),
    personUpdate: step('personUpdate'),
    groupUpdate: step('groupUpdate'),
    flagAttribution: step('flagAttribution'),
    /** sink — Kind: parallel, after every step. Each sink is isolated; a `required` one failing makes the request 503. */
    sink: new AsyncParallelHook<[SinkBatch]>(['batch'], 'sink'),
    routes: new SyncHook<[Router]>(['router'], 'routes'),
    ready: new AsyncSeriesHook<[]>([], 'ready'),
    closing: new SyncHook<[]>([], 'closing'),
    eventDropped: new SyncHook<[Dropped, EventContext]>(['dropped', 'context'], 'eventDropped'),
    stepFailed: new SyncHook<[StepInfo]>(['info'], 'stepFailed'),
  }
  const asHook = (h: unknown) => h as Hook<unknown, unknown>
  for (const { hook, policy } of STEPS) isolate(asHook(hooks[hook]), hook, policy, state)
  isolate(asHook(hooks.sink), 'sink', 'isolate', state)
  isolate(asHook(hooks.routes), 'routes', 'boot', state)
  isolate(asHook(hooks.ready), 'ready', 'boot', state)
  isolate(asHook(hooks.closing), 'closing', 'observe', state)
  isolate(asHook(hooks.eventDropped), 'eventDropped', 'observe', state)
  isolate(asHook(hooks.stepFailed), 'stepFailed', 'observe', state)
  Object.freeze(hooks)
  states.set(hooks, state)
  return hooks
}
