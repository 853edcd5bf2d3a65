/**
 * The plugin contract: the one file a plugin author reads. It imports only types, so it can be
 * published as the package's `plugin-api` subpath without pulling the service in.
 *
 * A plugin is a named object with an options schema and a `setup(api, options)` that taps hooks.
 * Every tap is wrapped by the core (see `core/isolation.ts`), which applies the failure policy of
 * the hook it is on; plugins never catch their own errors to protect the pipeline.
 */
import type { AsyncParallelHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from 'tapable'
import type { Static, TSchema } from 'typebox'
import type { Logger } from 'pino'
import type { Db } from 'mongodb'
import type Router from '@koa/router'
import type { Context, Next } from 'koa'

/** The loader refuses plugins built against another version of this contract. */
export const API_VERSION = 1 as const

/** A project (PostHog's "team"): events, persons and flags belong to exactly one. */
export interface Project {
  readonly id: number
  readonly name: string
  /** Public key the SDKs send (`phc_…`). */
  readonly apiToken: string
  /** Secret key for server-side features such as local evaluation (`phs_…`). */
  readonly secretApiToken: string
  /** IANA zone used for date-only flag comparisons. */
  readonly timezone: string
}

/** One event as the client sent it, before any rule was applied. */
export type WireEvent = Readonly<Record<string, unknown>>

/** The working copy of one event as it moves through the steps. */
export interface IngestEvent {
  /** Client uuid, or '' until `validate` makes a UUIDv7. */
  uuid: string
  /** Event name, '' when the client sent none. */
  event: string
  /** Already stringified (capture.md §1.6); '' when the client sent none. */
  distinctId: string
  /** Client properties, with top-level `$set` / `$set_once` merged in (capture.md §2.2a). */
  properties: Record<string, unknown>
  /** Computed from timestamp, offset and sent_at (capture.md §1.8). */
  timestamp: Date
  /** Person the event is attributed to, filled by the person steps. */
  person?: EventPerson
  /** Event was sent with `$process_person_profile: false`, or made personless by a step. */
  personless?: boolean
  /** Part of a `historical_migration` batch and old enough to keep the mark (capture.md §1.12). */
  historicalMigration?: boolean
}

export interface EventPerson {
  id: string
  properties: Record<string, unknown>
  createdAt: Date
  mode: 'full' | 'propertyless' | 'force_upgrade'
}

/** Marker returned by a step to stop the pipeline for this event on purpose. */
export interface Dropped {
  readonly dropped: true
  /** snake_case reason, stored as the ingestion warning's type. */
  readonly reason: string
  readonly details?: Readonly<Record<string, unknown>>
}

export function drop(reason: string, details?: Record<string, unknown>): Dropped {
  return Object.freeze({ dropped: true as const, reason, details })
}

export function isDropped(value: unknown): value is Dropped {
  return typeof value === 'object' && value !== null && (value as Partial<Dropped>).dropped === true
}

/** Per-event context: read-only facts about the request plus the declared slots steps may use. */
export interface EventContext {
  readonly project: Project
  readonly raw: WireEvent
  readonly receivedAt: Date
  readonly sentAt?: Date
  /** Client IP (X-Forwarded-For first hop when the proxy is trusted). */
  readonly ip?: string
  readonly historicalMigration: boolean
  readonly logger: Logger
  /** Record an ingestion warning that does not drop the event (capture.md §2.13). */
  warn(type: string, details?: Record<string, unknown>): void
  /**
   * Shared by the events that run through the steps one after another with this one (those of its
   * distinct_id in this request; all of a historical migration's) and by nothing else; dropped
   * when they are done. A step may keep here, under a key of its own, what it read or wrote for
   * the next of them, so that a request of 100 events of one person does not read that person 100
   * times. Another process can change the data meanwhile: keep only what the step's own writes
   * check (alias-resolve keeps persons, whose writes check their version).
   */
  readonly sequence: Map<string, unknown>
}

/** What a sink receives: the events of one request that survived every step, in order. */
export interface SinkBatch {
  readonly project: Project
  readonly events: ReadonlyArray<Readonly<IngestEvent>>
  readonly receivedAt: Date
  readonly historicalMigration: boolean
}

export type StepValue = IngestEvent | Dropped
/** A step returns a new event, `undefined` to keep it, or `drop(reason)`. */
export type StepResult = StepValue | undefined | void
/** Taps never see a dropped event: the core stops the chain as soon as one step drops it. */
export type StepHook = AsyncSeriesWaterfallHook<[IngestEvent, EventContext], StepResult>

export interface StepInfo {
  readonly plugin: string
  readonly hook: string
  readonly error: Error
  readonly retryable: boolean
}

/**
 * The hooks, in the order the core calls them for each event. Each is documented in
 * `core/hooks.ts` with its kind and failure policy.
 */
export interface IngestHooks {
  readonly validate: StepHook
  readonly geoip: StepHook
  readonly aliasResolve: StepHook
  readonly personUpdate: StepHook
  readonly groupUpdate: StepHook
  readonly flagAttribution: StepHook
  readonly sink: AsyncParallelHook<[SinkBatch]>
  /** Mount HTTP routes (decide, admin extensions). Called once after every setup. */
  readonly routes: SyncHook<[Router]>
  /** Every plugin is set up and routes are mounted; the server is about to listen. */
  readonly ready: AsyncSeriesHook<[]>
  /**
   * The service stops accepting requests and waits for those in flight: responses that never end
   * on their own (event streams, long polls) must end now, or shutdown waits its whole timeout.
   */
  readonly closing: SyncHook<[]>
  /** Observer: an event was dropped on purpose. */
  readonly eventDropped: SyncHook<[Dropped, EventContext]>
  /** Observer: a tap threw; the policy of its hook has been applied. */
  readonly stepFailed: SyncHook<[StepInfo]>
}

export type Teardown = () => void | Promise<void>

/** Services one plugin provides to others; extend it with `declare module` augmentation. */
// biome-ignore lint/suspicious/noEmptyInterface: plugins extend it by declaration merging, which a type alias cannot do
export interface Services {}
export type ServiceName = keyof Services & string

/** Read access to projects, for plugins that serve endpoints keyed by a project token. */
export interface ProjectLookup {
  byApiToken(token: string): Promise<Project | undefined>
  bySecretToken(token: string): Promise<Project | undefined>
  get(id: number): Promise<Project | undefined>
}

/**
 * One change made through the admin API, as the audit log records it (core/admin/audit.ts). States
 * are JSON (dates as ISO strings); `before` is null for a creation. Never holds a secret.
 */
export interface AuditChange {
  readonly projectId: number
  /** What changed: `project`, `feature_flag`, `cohort`, `flag_definitions`, … */
  readonly entityType: string
  readonly entityId: string | number | null
  /** `created`, `updated`, `deleted`, `restored`, `imported`, `members_added`, `members_removed`, … */
  readonly action: string
  readonly before: unknown
  readonly after: unknown
  /** The entity's version after the change, for entities that have one (flags, cohorts). */
  readonly version?: number | null
  /** Fields left out of the before/after difference (bookkeeping such as `updated_at`). */
  readonly ignore?: readonly string[]
  /** Facts beyond the states, e.g. the version a restore went back to. */
  readonly details?: Record<string, unknown>
}

/**
 * The admin API's audit log. A route records its change after writing it and before answering,
 * so that every acknowledged change has its record; records are never changed or deleted.
 */
export interface AuditLog {
  /** Records the change (or changes, in one write) as made by the admin key that authenticated `ctx`; resolves once stored. */
  record(ctx: Context, change: AuditChange | readonly AuditChange[]): Promise<void>
  /**
   * The recorded state of an entity right after it reached `version`, or undefined when none was
   * recorded. Only records since the entity's latest `imported` record count: an import may give
   * an id to another entity, whose versions start afresh.
   */
  stateAt(projectId: number, entityType: string, entityId: string | number, version: number): Promise<unknown>
}

export interface PluginApi {
  /** Instance id from config (defaults to the plugin's name); tap names are forced to it. */
  readonly id: string
  /**
   * Whether the config entry marks this plugin `required`. A sink that buffers must, when
   * required, resolve each batch only once it is durable ("200 means stored"); when not required
   * it may acknowledge on enqueue and flush later. Unset (an older core) means: assume required.
   */
  readonly required?: boolean
  readonly hooks: IngestHooks
  /** pino child logger bound to `{ plugin: id }`. */
  readonly logger: Logger
  /** Shared MongoDB handle owned by the core. */
  readonly db: Db
  readonly projects: ProjectLookup
  /** Whether `token` is an admin API key (for plugin routes outside /api that also accept it). */
  isAdminKey(token: string): boolean
  /** Where admin routes record the changes they make. */
  readonly audit: AuditLog
  /** The folder the service keeps its data in (absolute). */
  readonly dataDir: string
  /** Folder of the config file that named this plugin, for resolving relative option paths. */
  readonly configDir: string
  provide<K extends ServiceName>(name: K, service: Services[K]): void
  use<K extends ServiceName>(name: K): Services[K]
}

export interface PluginDefinition<S extends TSchema = TSchema> {
  /** Stable id used in logs and metrics: the built-in id or the npm package name. */
  readonly name: string
  readonly apiVersion: typeof API_VERSION
  /** TypeBox schema of the plugin's `options`; checked, with defaults applied, before setup. */
  readonly optionsSchema?: S
  /** Services earlier plugins must provide; checked at boot. */
  readonly requires?: readonly ServiceName[]
  setup(api: PluginApi, options: Static<S>): void | Teardown | Promise<void | Teardown>
}

/** Identity function that gives plugin authors type inference for their options. */
export function definePlugin<S extends TSchema>(definition: PluginDefinition<S>): PluginDefinition<S> {
  return definition
}

/** What `crossOrigin` carries, found by the core's CORS (a symbol of the global registry, so the published copy of this file marks routes the same way). */
export const CROSS_ORIGIN = Symbol.for('hedgerow.crossOrigin')

/**
 * Put first among a route's handlers when browsers call it from pages of other sites (capture,
 * /flags, OFREP): the route answers CORS permissively, as PostHog's public endpoints do — the
 * Origin echoed with credentials, or `*` without one — preflights included. Routes without it
 * answer cross-origin only to the operator's `server.adminCorsOrigins`.
 */
export const crossOrigin = Object.assign(
  function crossOrigin(ctx: Context, next: Next): Promise<unknown> {
    grantCrossOrigin(ctx)
    return next()
  },
  { [CROSS_ORIGIN]: true as const },
)

/** The headers of a granted cross-origin response. */
export function grantCrossOrigin(ctx: Context): void {
  const origin = ctx.get('Origin')
  if (origin) {
    ctx.set('Access-Control-Allow-Origin', origin)
    ctx.set('Access-Control-Allow-Credentials', 'true')
    ctx.vary('Origin')
  } else {
    ctx.set('Access-Control-Allow-Origin', '*')
  }
}

/*
 * Node 20's V8 makes an object spread that adds keys the source lacks slow: `{ ...event, person }`
 * or `{ ...properties }` followed by `properties.$ip = …` cost 0.7-2.3 µs each against ~0.1-0.2 µs
 * for the copies below (measured on the capture bench's events), and leave slower objects behind.
 * The steps run several per event, so these two helpers make the same objects the cheap way.
 */

/** `{ ...event, ...fields }`, for events and other objects whose keys are the service's own. */
export function withFields<T extends object>(event: T, fields: Partial<T>): T {
  return Object.assign({}, event, fields)
}

/**
 * `{ ...record }` for objects keyed by client data: the own enumerable keys in order, and a key
 * named `__proto__` stays an own property as with a spread (never the prototype setter). Keys in
 * `omit` are left out: built without them, since deleting from a copy makes a slow object.
 */
export function copyRecord(
  source: Readonly<Record<string, unknown>>,
  omit?: readonly string[],
): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(source)) {
    if (omit?.includes(key)) continue
    if (key === '__proto__')
      Object.defineProperty(copy, key, { value: source[key], enumerable: true, writable: true, configurable: true })
    else copy[key] = source[key]
  }
  return copy
}

/**
 * The errors a client can see. Every one is an HttpError: a status, a JSON body of the shape
 * `{type, code, detail, attr}`, and whether the client should retry. A plugin throws them (or
 * makes them with the helpers below) and the core answers with exactly that body.
 */
export type ErrorType = 'validation_error' | 'authentication_error' | 'server_error'

export interface ErrorBody {
  type: ErrorType
  code: string
  detail: string
  attr: string | null
}

/** Brand of the global symbol registry, so `instanceof HttpError` holds across the service's copy of this file and the published one a plugin imports. */
const HTTP_ERROR = Symbol.for('hedgerow.HttpError')

export class HttpError extends Error {
  static [Symbol.hasInstance](value: unknown): boolean {
    if (this !== HttpError) return Function.prototype[Symbol.hasInstance].call(this, value)
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[HTTP_ERROR] === true
  }

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
  ) {
    super(detail)
    this.name = 'HttpError'
    Object.defineProperty(this, HTTP_ERROR, { value: true })
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

/** Driver errors that mean "the database is unreachable right now", as opposed to a bad request. */
const TRANSIENT_DRIVER_ERRORS = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoTopologyClosedError',
  'MongoNotConnectedError',
  'MongoPoolClearedError',
  'MongoWriteConcernError',
  'MongoOperationTimeoutError',
])

/**
 * Whether the client should retry the request: the database is unreachable, a step timed out, or
 * an HttpError said so. Everything else is a property of the request and would fail again.
 */
export function isRetryable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  if (error instanceof HttpError) return error.retryable
  const e = error as {
    name?: unknown
    retryable?: unknown
    cause?: unknown
    hasErrorLabel?: (label: string) => boolean
  }
  if (e.retryable === true) return true
  if (typeof e.name === 'string' && TRANSIENT_DRIVER_ERRORS.has(e.name)) return true
  if (typeof e.hasErrorLabel === 'function' && (e.hasErrorLabel('RetryableWriteError') || e.hasErrorLabel('ResetPool')))
    return true
  return e.cause !== undefined && e.cause !== error && isRetryable(e.cause)
}

/**
 * The stored event document (capture.md §2.12): what sink-mongo stores and the admin API reads
 * back, and what the other built-in sinks send, so a third-party sink can write the same shape.
 */
export interface EventDocument {
  project_id: number
  uuid: string
  event: string
  distinct_id: string
  properties: Record<string, unknown>
  timestamp: Date
  /** When the service received the event. The retention TTL counts from here. */
  created_at: Date
  person_id?: string
  person_properties?: Record<string, unknown>
  person_created_at?: Date
  person_mode: 'full' | 'propertyless' | 'force_upgrade'
  historical_migration?: true
}

/** An event of a sink batch as its stored document. */
export function toDocument(event: Readonly<IngestEvent>, batch: SinkBatch): EventDocument {
  const doc: EventDocument = {
    project_id: batch.project.id,
    uuid: event.uuid,
    event: event.event,
    distinct_id: event.distinctId,
    properties: event.properties,
    timestamp: event.timestamp,
    created_at: batch.receivedAt,
    person_mode: event.person?.mode ?? (event.personless ? 'propertyless' : 'full'),
  }
  if (event.person) {
    doc.person_id = event.person.id
    doc.person_properties = event.person.properties
    doc.person_created_at = event.person.createdAt
  }
  if (event.historicalMigration) doc.historical_migration = true
  return doc
}
