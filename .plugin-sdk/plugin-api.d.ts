// Generated from core/plugin-api.ts by `npm run build:plugin-sdk`; do not edit.
/**
 * The plugin contract: the one file a plugin author reads. It imports only types and TypeBox (the
 * schema library of every plugin's options), so it can be published as the package's
 * `plugin-api` subpath without pulling the service in.
 *
 * A plugin is a named object with an options schema and a `setup(api, options)` that taps hooks.
 * The core runs every tap (`core/engine.ts`) with the failure policy of the hook it is on (the
 * phase table, `core/hooks.ts`); plugins never catch their own errors to protect the pipeline.
 */
import type { AsyncParallelHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from 'tapable';
import type { Static, TSchema } from 'typebox';
import { Type } from 'typebox';
import type { Logger } from 'pino';
import type { Collection, Db, Document, Filter } from 'mongodb';
import type { NatsConnection } from 'nats';
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
/** The loader refuses plugins built against another version of this contract. */
export declare const API_VERSION: 1;
/** A project (PostHog's "team"): events, persons and flags belong to exactly one. */
export interface Project {
    readonly id: number;
    readonly name: string;
    /** Public key the SDKs send (`phc_…`). */
    readonly apiToken: string;
    /** Secret key for server-side features such as local evaluation (`phs_…`). */
    readonly secretApiToken: string;
    /** IANA zone used for date-only flag comparisons. */
    readonly timezone: string;
}
/** One event as the client sent it, before any rule was applied. */
export type WireEvent = Readonly<Record<string, unknown>>;
/** The working copy of one event as it moves through the steps. */
export interface IngestEvent {
    /** Client uuid, or '' until `validate` makes a UUIDv7. */
    uuid: string;
    /** Event name, '' when the client sent none. */
    event: string;
    /** Already stringified (capture.md §1.6); '' when the client sent none. */
    distinctId: string;
    /** Client properties, with top-level `$set` / `$set_once` merged in (capture.md §2.2a). */
    properties: Record<string, unknown>;
    /** Computed from timestamp, offset and sent_at (capture.md §1.8). */
    timestamp: Date;
    /** Person the event is attributed to, filled by the person steps. */
    person?: EventPerson;
    /** Event was sent with `$process_person_profile: false`, or made personless by a step. */
    personless?: boolean;
    /** Part of a `historical_migration` batch and old enough to keep the mark (capture.md §1.12). */
    historicalMigration?: boolean;
}
export interface EventPerson {
    id: string;
    properties: Record<string, unknown>;
    createdAt: Date;
    mode: 'full' | 'propertyless' | 'force_upgrade';
}
/** Marker returned by a step to stop the pipeline for this event on purpose. */
export interface Dropped {
    readonly dropped: true;
    /** snake_case reason, stored as the ingestion warning's type. */
    readonly reason: string;
    readonly details?: Readonly<Record<string, unknown>>;
}
export declare function drop(reason: string, details?: Record<string, unknown>): Dropped;
export declare function isDropped(value: unknown): value is Dropped;
/** Per-event context: read-only facts about the request plus the declared slots steps may use. */
export interface EventContext {
    readonly project: Project;
    readonly raw: WireEvent;
    readonly receivedAt: Date;
    readonly sentAt?: Date;
    /** Client IP (X-Forwarded-For first hop when the proxy is trusted). */
    readonly ip?: string;
    readonly historicalMigration: boolean;
    readonly logger: Logger;
    /** Record an ingestion warning that does not drop the event (capture.md §2.13). */
    warn(type: string, details?: Record<string, unknown>): void;
    /**
     * Shared by the events that run through the steps one after another with this one (those of its
     * distinct_id in this request; all of a historical migration's) and by nothing else; dropped
     * when they are done. A step may keep here, under a key of its own, what it read or wrote for
     * the next of them, so that a request of 100 events of one person does not read that person 100
     * times. Another process can change the data meanwhile: keep only what the step's own writes
     * check (the persons plugin keeps persons, whose writes check their version).
     */
    readonly sequence: Map<string, unknown>;
}
/** What a sink receives: the events of one request that survived every step, in order. */
export interface SinkBatch {
    readonly project: Project;
    readonly events: ReadonlyArray<Readonly<IngestEvent>>;
    readonly receivedAt: Date;
    readonly historicalMigration: boolean;
}
export type StepValue = IngestEvent | Dropped;
/** A step returns a new event, `undefined` to keep it, or `drop(reason)`. */
export type StepResult = StepValue | undefined | void;
/** Taps never see a dropped event: the core stops the chain as soon as one step drops it. */
export type StepHook = AsyncSeriesWaterfallHook<[IngestEvent, EventContext], StepResult>;
export interface StepInfo {
    readonly plugin: string;
    readonly hook: string;
    readonly error: Error;
    readonly retryable: boolean;
}
/**
 * The hooks, in the order the core calls them for each event. Each is listed in the phase table,
 * `core/hooks.ts`, with its kind and failure policy.
 */
export interface IngestHooks {
    readonly validate: StepHook;
    readonly geoip: StepHook;
    readonly aliasResolve: StepHook;
    readonly personUpdate: StepHook;
    readonly groupUpdate: StepHook;
    readonly flagAttribution: StepHook;
    readonly sink: AsyncParallelHook<[SinkBatch]>;
    /** Mount HTTP routes (decide, admin extensions). Called once after every setup. */
    readonly routes: SyncHook<[Router]>;
    /** Every plugin is set up and routes are mounted; the server is about to listen. */
    readonly ready: AsyncSeriesHook<[]>;
    /**
     * The service stops accepting requests and waits for those in flight: responses that never end
     * on their own (event streams, long polls) must end now, or shutdown waits its whole timeout.
     */
    readonly closing: SyncHook<[]>;
    /** Observer: an event was dropped on purpose. */
    readonly eventDropped: SyncHook<[Dropped, EventContext]>;
    /** Observer: a tap threw; the policy of its hook has been applied. */
    readonly stepFailed: SyncHook<[StepInfo]>;
}
/**
 * Where a tap runs among the taps of its hook (tapable's `stage`): by stage, then in the order the
 * config lists the plugins. Each hook has one own step, the built-in named after it (validate's
 * rules, the persons plugin's person lookup…), tapped at `Stage.step`; a plugin that must run before or
 * after it, wherever it is listed, taps at `Stage.beforeStep` or `Stage.afterStep`.
 */
export declare const Stage: Readonly<{
    /** Before the hook's own step: group-update strips `$groupidentify`'s person updates before the persons plugin reads them. */
    readonly beforeStep: -1000;
    /** The hook's own step, and the default of every tap. */
    readonly step: 0;
    /** After the hook's own step, seeing the event it left: spike-detection and group-update's key check after validate's rules. */
    readonly afterStep: 100;
}>;
/** A hook as a plugin holds it: it may tap it, never run it (the core does, by the phase table). */
export type TapOnly<H> = H extends {
    tapPromise: unknown;
} ? Pick<H, Extract<keyof H, 'tap' | 'tapAsync' | 'tapPromise'>> : Pick<H, Extract<keyof H, 'tap'>>;
/** The hooks as `api.hooks` hands them to a plugin. */
export type PluginHooks = {
    readonly [K in keyof IngestHooks]: TapOnly<IngestHooks[K]>;
};
export type Teardown = () => void | Promise<void>;
/** A person as the `persons` service reads it: what flags evaluate against. */
export interface StoredPerson {
    /** The person uuid, as events carry it in `person_id`. */
    readonly id: string;
    /** Keys exactly as sent (`$browser`, `a.b`, `__proto__`): read them as own keys only. */
    readonly properties: Readonly<Record<string, unknown>>;
    readonly createdAt: Date;
}
/**
 * Read access to the persons the `aliasResolve` and `personUpdate` steps write (the built-in
 * `persons` plugin provides it). Every read is fresh: a write completed before the call (a `$set`
 * captured a moment ago, a merge) is seen. Concurrent reads may be batched into one query.
 */
export interface PersonsService {
    /** The person a distinct id belongs to, or null when it has none. */
    byDistinctId(projectId: number, distinctId: string): Promise<StoredPerson | null>;
    /** The person ids of those distinct ids that have a person, in the order given, without repeats. */
    personIdsOf(projectId: number, distinctIds: readonly string[]): Promise<string[]>;
    /** Every distinct id of a person, sorted. */
    distinctIdsOf(projectId: number, personId: string): Promise<string[]>;
}
/**
 * Services one plugin provides to others, by name; a plugin's own extend it with `declare module`
 * augmentation. Those listed here are the contract's: any plugin may provide them in place of the
 * built-in one.
 */
export interface Services {
    /** Provided by the built-in `persons` plugin; decide reads persons through it. */
    persons: PersonsService;
}
export type ServiceName = keyof Services & string;
/** Read access to projects, for plugins that serve endpoints keyed by a project token. */
export interface ProjectLookup {
    byApiToken(token: string): Promise<Project | undefined>;
    bySecretToken(token: string): Promise<Project | undefined>;
    get(id: number): Promise<Project | undefined>;
}
/**
 * One change made through the admin API, as the audit log records it (core/admin/audit.ts). States
 * are JSON (dates as ISO strings); `before` is null for a creation. Never holds a secret.
 */
export interface AuditChange {
    readonly projectId: number;
    /** What changed: `project`, `feature_flag`, `cohort`, `flag_definitions`, … */
    readonly entityType: string;
    readonly entityId: string | number | null;
    /** `created`, `updated`, `deleted`, `restored`, `imported`, `members_added`, `members_removed`, … */
    readonly action: string;
    readonly before: unknown;
    readonly after: unknown;
    /** The entity's version after the change, for entities that have one (flags, cohorts). */
    readonly version?: number | null;
    /** Fields left out of the before/after difference (bookkeeping such as `updated_at`). */
    readonly ignore?: readonly string[];
    /** Facts beyond the states, e.g. the version a restore went back to. */
    readonly details?: Record<string, unknown>;
}
/**
 * The admin API's audit log. A route records its change after writing it and before answering,
 * so that every acknowledged change has its record; records are never changed or deleted.
 */
export interface AuditLog {
    /** Records the change (or changes, in one write) as made by the admin key that authenticated `ctx`; resolves once stored. */
    record(ctx: Context, change: AuditChange | readonly AuditChange[]): Promise<void>;
    /**
     * The recorded state of an entity right after it reached `version`, or undefined when none was
     * recorded. Only records since the entity's latest `imported` record count: an import may give
     * an id to another entity, whose versions start afresh.
     */
    stateAt(projectId: number, entityType: string, entityId: string | number, version: number): Promise<unknown>;
}
export interface PluginApi {
    /** Instance id from config (defaults to the plugin's name); tap names are forced to it. */
    readonly id: string;
    /**
     * Whether the config entry marks this plugin `required`. A sink that buffers must, when
     * required, resolve each batch only once it is durable ("200 means stored"); when not required
     * it may acknowledge on enqueue and flush later. Unset (an older core) means: assume required.
     */
    readonly required?: boolean;
    /** Tap-only: taps made outside `setup` throw, and every tap's name is forced to `id`. */
    readonly hooks: PluginHooks;
    /** pino child logger bound to `{ plugin: id }`. */
    readonly logger: Logger;
    /** Shared MongoDB handle owned by the core. */
    readonly db: Db;
    readonly projects: ProjectLookup;
    /** Whether `token` is an admin API key (for plugin routes outside /api that also accept it). */
    isAdminKey(token: string): boolean;
    /** Body reading, per-route auth, pagination and rate limits for the routes a plugin mounts. */
    readonly http: HttpKit;
    readonly metrics: Metrics;
    readonly withDeadline: WithDeadline;
    /** Coalesced commands and one-command finds, for plugins that read or write the database in bulk. */
    readonly batching: Batching;
    /** Opens a NATS connection the core watches; `name` is how the server lists it. Close it in teardown. */
    connectNats(settings: NatsConnectionSettings, name: string): Promise<WatchedConnection>;
    /** Where admin routes record the changes they make. */
    readonly audit: AuditLog;
    /** The folder the service keeps its data in (absolute). */
    readonly dataDir: string;
    /** Folder of the config file that named this plugin, for resolving relative option paths. */
    readonly configDir: string;
    provide<K extends ServiceName>(name: K, service: Services[K]): void;
    use<K extends ServiceName>(name: K): Services[K];
}
export interface PluginDefinition<S extends TSchema = TSchema> {
    /** Stable id used in logs and metrics: the built-in id or the npm package name. */
    readonly name: string;
    readonly apiVersion: typeof API_VERSION;
    /** TypeBox schema of the plugin's `options`; checked, with defaults applied, before setup. */
    readonly optionsSchema?: S;
    /** Services earlier plugins must provide; checked at boot. */
    readonly requires?: readonly ServiceName[];
    setup(api: PluginApi, options: Static<S>): void | Teardown | Promise<void | Teardown>;
}
/** Identity function that gives plugin authors type inference for their options. */
export declare function definePlugin<S extends TSchema>(definition: PluginDefinition<S>): PluginDefinition<S>;
/** What `crossOrigin` carries, found by the core's CORS (a symbol of the global registry, so the published copy of this file marks routes the same way). */
export declare const CROSS_ORIGIN: unique symbol;
/**
 * Put first among a route's handlers when browsers call it from pages of other sites (capture,
 * /flags, OFREP): the route answers CORS permissively, as PostHog's public endpoints do — the
 * Origin echoed with credentials, or `*` without one — preflights included. Routes without it
 * answer cross-origin only to the operator's `server.adminCorsOrigins`.
 */
export declare const crossOrigin: ((ctx: Context, next: Next) => Promise<unknown>) & {
    [CROSS_ORIGIN]: true;
};
/** The headers of a granted cross-origin response. */
export declare function grantCrossOrigin(ctx: Context): void;
/** `{ ...event, ...fields }`, for events and other objects whose keys are the service's own. */
export declare function withFields<T extends object>(event: T, fields: Partial<T>): T;
/**
 * `{ ...record }` for objects keyed by client data: the own enumerable keys in order, and a key
 * named `__proto__` stays an own property as with a spread (never the prototype setter). Keys in
 * `omit` are left out: built without them, since deleting from a copy makes a slow object.
 */
export declare function copyRecord(source: Readonly<Record<string, unknown>>, omit?: readonly string[]): Record<string, unknown>;
/**
 * The errors a client can see. Every one is an HttpError: a status, a JSON body of the shape
 * `{type, code, detail, attr}`, and whether the client should retry. The codes the service uses
 * are listed once, in ERROR_CATALOGUE below, with their status, type and retryability; a plugin
 * makes one with `httpError(code, detail, attr)` and the core answers with exactly that body.
 */
export type ErrorType = 'validation_error' | 'authentication_error' | 'server_error';
export interface ErrorBody {
    type: ErrorType;
    code: string;
    detail: string;
    attr: string | null;
}
export interface CatalogueEntry {
    readonly status: number;
    readonly type: ErrorType;
    /** The client should send the same request again later (SDKs retry 429 and 5xx). */
    readonly retryable: boolean;
}
/** Every error code the service answers with, and what the client sees for it. */
export declare const ERROR_CATALOGUE: {
    readonly invalid_input: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_json: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_payload: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_request: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly required: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly empty_body: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly empty_payload: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly body_read_failed: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly no_events: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly too_deeply_nested: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_lz64: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_utf8: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_gzip: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_deflate: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_brotli: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_header_value: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly missing_required_headers: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly request_parsing_error: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly empty_batch: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_batch: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly missing_event_uuid: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly invalid_event_uuid: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly duplicate_event_uuid: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly missing_token: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly unique: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly not_static: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly too_many_backtracking_regexes: {
        readonly status: 400;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly not_authenticated: {
        readonly status: 401;
        readonly type: 'authentication_error';
        readonly retryable: false;
    };
    readonly authentication_failed: {
        readonly status: 401;
        readonly type: 'authentication_error';
        readonly retryable: false;
    };
    readonly missing_api_key: {
        readonly status: 401;
        readonly type: 'authentication_error';
        readonly retryable: false;
    };
    readonly no_api_key: {
        readonly status: 401;
        readonly type: 'authentication_error';
        readonly retryable: false;
    };
    readonly invalid_api_key: {
        readonly status: 401;
        readonly type: 'authentication_error';
        readonly retryable: false;
    };
    readonly inconsistent_api_keys: {
        readonly status: 401;
        readonly type: 'authentication_error';
        readonly retryable: false;
    };
    readonly missing_authorization: {
        readonly status: 401;
        readonly type: 'authentication_error';
        readonly retryable: false;
    };
    readonly invalid_api_token: {
        readonly status: 401;
        readonly type: 'authentication_error';
        readonly retryable: false;
    };
    readonly not_found: {
        readonly status: 404;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly conflict: {
        readonly status: 409;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly stale_version: {
        readonly status: 409;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly payload_too_large: {
        readonly status: 413;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly event_too_large: {
        readonly status: 413;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly unsupported_content_type: {
        readonly status: 415;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly unsupported_encoding: {
        readonly status: 415;
        readonly type: 'validation_error';
        readonly retryable: false;
    };
    readonly rate_limited: {
        readonly status: 429;
        readonly type: 'validation_error';
        readonly retryable: true;
    };
    readonly internal_error: {
        readonly status: 500;
        readonly type: 'server_error';
        readonly retryable: false;
    };
    /** Storage or a step is unavailable or too slow right now. */
    readonly unavailable: {
        readonly status: 503;
        readonly type: 'server_error';
        readonly retryable: true;
    };
};
export type ErrorCode = keyof typeof ERROR_CATALOGUE;
export declare class HttpError extends Error {
    readonly status: number;
    readonly type: ErrorType;
    readonly code: string;
    readonly detail: string;
    readonly attr: string | null;
    static [Symbol.hasInstance](value: unknown): boolean;
    /** Prefer `httpError(code, …)`, which takes status and type from the catalogue; this form is for codes outside it. */
    constructor(status: number, type: ErrorType, code: string, detail: string, attr?: string | null);
    get retryable(): boolean;
    toBody(): ErrorBody;
}
/** The error the catalogue describes for `code`, with this request's `detail` and offending field. */
export declare function httpError(code: ErrorCode, detail: string, attr?: string | null): HttpError;
/**
 * An internal failure the client should retry (a lost optimistic race, definitions that kept
 * changing while read): a step or read that throws it makes the request answer 503 `unavailable`.
 */
export declare function retryableError(message: string, options?: {
    cause?: unknown;
}): Error & {
    retryable: true;
};
/** A write that kept losing optimistic races with concurrent writers: retryable, so the request answers 503 and the SDK sends it again. */
export declare function contentionError(what: string): Error & {
    retryable: true;
};
/** A 400 with any code: for codes outside the catalogue. */
export declare const badRequest: (code: string, detail: string, attr?: string | null) => HttpError;
/** A 401 with any code: for codes outside the catalogue. */
export declare const unauthorized: (code: string, detail: string, attr?: string | null) => HttpError;
export declare const tooLarge: (detail: string) => HttpError;
export declare const unavailable: (detail: string) => HttpError;
/**
 * Whether the client should retry the request: the database is unreachable, a step timed out, or
 * an HttpError said so. Everything else is a property of the request and would fail again.
 */
export declare function isRetryable(error: unknown): boolean;
/**
 * The stored event document (capture.md §2.12): what sink-mongo stores and the admin API reads
 * back, and what the other built-in sinks send, so a third-party sink can write the same shape.
 */
export interface EventDocument {
    project_id: number;
    uuid: string;
    event: string;
    distinct_id: string;
    properties: Record<string, unknown>;
    timestamp: Date;
    /** When the service received the event. The retention TTL counts from here. */
    created_at: Date;
    person_id?: string;
    person_properties?: Record<string, unknown>;
    person_created_at?: Date;
    person_mode: 'full' | 'propertyless' | 'force_upgrade';
    historical_migration?: true;
}
/** An event of a sink batch as its stored document. */
export declare function toDocument(event: Readonly<IngestEvent>, batch: SinkBatch): EventDocument;
/** MongoDB's error code for a write a unique index refused: another writer won the race, or the write was a retry. */
export declare const DUPLICATE_KEY = 11000;
/** Whether `error` (a driver error, or one write error of a bulk write) is a unique index refusing a duplicate. */
export declare function isDuplicateKey(error: unknown): boolean;
/** The collections of groups: group-update writes them (decide adds the group types of imported definitions). */
export declare const GROUP_COLLECTIONS: {
    readonly groups: 'groups';
    readonly groupTypeMappings: 'group_type_mappings';
};
/** One group type of a project and the `$group_<index>` column it owns, forever. */
export interface GroupTypeMappingDocument {
    project_id: number;
    group_type: string;
    /** 0–4, the lowest free index when the type was first seen. */
    group_type_index: number;
    created_at: Date;
}
/** One group, written by `$groupidentify`. */
export interface GroupDocument {
    project_id: number;
    group_type_index: number;
    group_key: string;
    /** Property names are stored as sent (`$browser`, `a.b`); read them with `Object.hasOwn`. */
    group_properties: Record<string, unknown>;
    /** The earliest event time that identified the group. */
    created_at: Date;
    /** 1 when created, +1 on every write that changed something (the optimistic-lock token). */
    version: number;
}
/** The `groups` service, provided by the core: reads of stored groups, always available. */
export interface GroupsReader {
    /**
     * The stored properties of a group, undefined when it was never stored. Reads made in the same
     * turn of the event loop share one query; each sees every write completed before it was made.
     */
    properties(projectId: number, typeIndex: number, groupKey: string): Promise<Record<string, unknown> | undefined>;
    /**
     * This process wrote (or may have written) the group: the next `properties` reads it, even
     * before the change stream that keeps reads exact reports it. Call it once the write is over.
     */
    changed(projectId: number, typeIndex: number, groupKey: string): void;
    /** One project's group types: index (as a string) → name. */
    typeMapping(projectId: number): Promise<Record<string, string>>;
    /** The group types of several projects in one query (a project without any maps to `{}`). */
    typeMappings(projectIds: readonly number[]): Promise<Map<number, Record<string, string>>>;
}
/** Which stored events a page holds; every field narrows it. */
export interface EventsPageQuery {
    /** At most this many events. */
    readonly limit: number;
    /** Only events whose timestamp is after this. */
    readonly after?: Date;
    /** Only events whose timestamp is before this. */
    readonly before?: Date;
    readonly event?: string;
    readonly distinctId?: string;
    /** Only events that sort after this one (the last of the previous page): older, or as old with a lower uuid. */
    readonly below?: {
        readonly timestamp: Date;
        readonly uuid: string;
    };
}
/**
 * The `events` service: stored events read back, newest first (then by uuid, descending). Provided
 * by the sink that stores them (sink-mongo, over its configured collection); the admin API reads
 * events through it.
 */
export interface EventsReader {
    page(projectId: number, query: EventsPageQuery): Promise<EventDocument[]>;
    /**
     * Follows one project's events as they are stored (by any process), calling `listener.event`
     * for each in the order they arrive, until the follower is closed or `listener.error` is
     * called. Optional: a reader without it serves no live stream.
     */
    follow?(projectId: number, query: EventsFollowQuery, listener: EventsListener): Promise<EventsFollower>;
}
/** Which events a follower sees; every field narrows it. */
export interface EventsFollowQuery {
    readonly event?: string;
    readonly distinctId?: string;
    /** Also the events stored after the one of this id (a `StoredEvent.id`), up to `catchUpLimit`, first. */
    readonly after?: string;
    readonly catchUpLimit?: number;
}
/** A stored event and its position: ids of one reader sort in the order events were stored. */
export interface StoredEvent {
    readonly id: string;
    readonly document: EventDocument;
}
export interface EventsListener {
    event(stored: StoredEvent): void;
    /** Events stored after `after` that the catch-up left out (more than `catchUpLimit`). */
    missed?(count: number): void;
    error(error: Error): void;
}
export interface EventsFollower {
    close(): Promise<void>;
}
/** The keys PostHog's GeoIP transformation writes (`$geoip_<key>`). */
export type GeoipKey = 'city_name' | 'city_confidence' | 'subdivision_2_name' | 'subdivision_2_code' | 'subdivision_1_name' | 'subdivision_1_code' | 'country_name' | 'country_code' | 'continent_name' | 'continent_code' | 'postal_code' | 'latitude' | 'longitude' | 'accuracy_radius' | 'time_zone';
/** What a GeoIP lookup found: only the keys it had a value for. */
export type GeoLocation = Partial<Record<GeoipKey, string | number>>;
/**
 * The `geoip` service, provided by the plugin on the geoip step (the built-in geoip, or one that
 * replaces it): decide computes the `$geoip_*` person properties of a flags request with it.
 */
export interface GeoipLookup {
    /** What is known about `ip` (v4 or v6), or undefined when nothing is (not an address, not public, not found). */
    lookup(ip: string): GeoLocation | undefined;
}
export interface Services {
    groups: GroupsReader;
    events: EventsReader;
    geoip: GeoipLookup;
}
export declare const MAX_DISTINCT_ID_CHARS = 200;
/** The hyphenated 8-4-4-4-12 hex form, any version, either case. */
export declare function isUuid(text: string): boolean;
/**
 * RFC 9562 version 7: 48 bits of Unix milliseconds taken from `at`, then the version nibble,
 * 12 random bits, the `10` variant and 62 random bits. Times before 1970 use 0.
 */
export declare function uuidv7(at?: Date): string;
/** The first `max` Unicode scalars (code points), not UTF-16 units and not bytes. */
export declare function cutToScalars(text: string, max: number): string;
/**
 * Text made a distinct_id (capture.md §1.6): NUL replaced by U+FFFD, cut to 200 Unicode scalars.
 * The ids an event names besides its own (`$anon_distinct_id`, the `alias` of `$create_alias`)
 * become distinct ids of a person too, so a step cuts them the same way.
 */
export declare function asDistinctId(text: string): string;
export type Checked<T> = {
    ok: true;
    value: T;
} | {
    ok: false;
    path: string;
    reason: string;
};
/** Checks `value` (after applying the schema's defaults to a copy when `withDefaults`), without throwing. */
export declare function check<S extends TSchema>(schema: S, value: unknown, withDefaults?: boolean): Checked<Static<S>>;
/**
 * `value` (a request body, a query) checked against `schema`, or the standard 400: code
 * `invalid_input`, the offending field as `attr` (dotted) and in the detail.
 */
export declare function parseWith<S extends TSchema>(schema: S, value: unknown): Static<S>;
export type MetricLabels = Readonly<Record<string, string>>;
/** The service's Prometheus-style registry, rendered at `GET /_metrics`. */
export interface Metrics {
    /** Adds `by` (default 1) to the counter `name{labels}`; name it `hedgerow_<what>_total`. */
    count(name: string, labels?: MetricLabels, by?: number): void;
}
/**
 * `work`, or a rejection once `ms` have passed: by default a retryable error (`<what> timed out
 * after <ms> ms`, so a request it fails answers 503), or the error `makeError` makes. Deadlines
 * share one timer, so a deadline per event or per read costs nearly nothing.
 */
export type WithDeadline = <T>(work: Promise<T>, ms: number, what: string, makeError?: () => Error) => Promise<T>;
/** Answers single-key calls from loads of many keys (`Batching.coalescer`). */
export interface Coalescer<K, V> {
    /** The value `load` answered for `key`, or undefined when its map lacks it. */
    get(key: K): Promise<V | undefined>;
}
/** A document as a WatchedCache keeps it: the value read, and the document's `_id`, which its changes name. */
export interface CachedRead<V> {
    readonly value: V;
    readonly documentId: unknown;
}
export interface WatchedCacheOptions {
    /** Keys kept (found or not); at the limit the cache is emptied and fills again. Default 20,000. */
    limit?: number;
    /** Told once when the collection has no change stream (a standalone MongoDB): nothing is kept then. */
    onUnavailable?(error: Error): void;
}
/**
 * Reads of one collection kept between calls while a change stream of it says they are
 * unchanged (`Batching.watchedCache`): an update, replace or delete of a document evicts it, an
 * insert forgets the keys not found, a read in flight when its document changed is not kept, and
 * without change streams nothing is kept. A write of this process must call `changed` once it is
 * acknowledged, so that the next read sees it before its change arrives.
 */
export interface WatchedCache<V> {
    /** Whether kept reads are served (the change stream is open; it opens at the first read). */
    readonly live: boolean;
    /** The kept value of `key`, or what `load` reads (undefined: not found). */
    read(key: string, load: () => Promise<CachedRead<V> | undefined>): Promise<V | undefined>;
    /** This process wrote (or may have written) the document of `key`. */
    changed(key: string): void;
    close(): void;
}
/** How a coalescer (`Batching.coalescer`) spaces its loads. */
export interface CoalescerOptions {
    /**
     * A call made within this many ms after a load of a single key waits until they have passed and
     * shares the next load with the calls made meanwhile, so evenly spaced requests share reads as
     * bursts do; a call after a quiet spell or after a load of several keys goes out on the next
     * turn, as with 0, the default (one load per event-loop turn).
     */
    spacingMs?: number;
}
/**
 * How the built-in persons and groups reads and writes reach the database in bulk. A call joins
 * the batch still collecting, sent on the next turn of the event loop, so it sees every write
 * completed before it was made (as its own `findOne` would) and no result is reused for a later call.
 */
export interface Batching {
    /**
     * Coalesces the `get` calls of one event-loop turn into one `load` of their keys (deduplicated
     * by `id`, at most 500 per load); `load` answers a map keyed by `id(key)`, and a failed load
     * rejects every call of its batch.
     */
    coalescer<K, V>(id: (key: K) => string, load: (keys: K[]) => Promise<ReadonlyMap<string, V>>, options?: CoalescerOptions): Coalescer<K, V>;
    /** Groups keys by project, for a `load` that sends one command per project. */
    byProject<K extends {
        projectId: number;
    }>(keys: readonly K[]): Map<number, K[]>;
    /**
     * The documents of a find, read from the primary as one `find` command (no cursor machinery)
     * when they fit its first batch; `expected` (the number of `$in` keys, say) sizes that batch.
     */
    findAll<T extends Document, R = T>(collection: Collection<T>, filter: Filter<T>, projection: Document, expected?: number): Promise<R[]>;
    /** A cache of reads of `collection` that its change stream keeps exact (WatchedCache). */
    watchedCache<V>(collection: Collection<Document>, options?: WatchedCacheOptions): WatchedCache<V>;
}
/** Connection settings of a NATS server, as plugin options; spread into an options schema. */
export declare const natsConnectionFields: {
    servers: Type.TUnion<[Type.TString, Type.TArray<Type.TString>]>;
    connectTimeoutMs: Type.TInteger;
    /** Wait between reconnection attempts after the connection is lost (it is retried forever). */
    reconnectTimeWaitMs: Type.TInteger;
    token: Type.TOptional<Type.TString>;
    user: Type.TOptional<Type.TString>;
    pass: Type.TOptional<Type.TString>;
};
export interface NatsConnectionSettings {
    readonly servers: string | string[];
    readonly connectTimeoutMs: number;
    readonly reconnectTimeWaitMs: number;
    readonly token?: string;
    readonly user?: string;
    readonly pass?: string;
}
/** A NATS connection the core watches: reconnection retried forever, status changes logged. */
export interface WatchedConnection {
    readonly nc: NatsConnection;
    /** False between a lost connection and the reconnect. */
    connected(): boolean;
    /** Drains within `timeoutMs`, then closes whatever is left; call it from the plugin's teardown. */
    close(timeoutMs: number): Promise<void>;
}
/** Body limits of an endpoint SDKs call: the bytes on the wire, and once decompressed or decoded. */
export interface PayloadLimits {
    readonly maxBodyBytes: number;
    readonly maxDecodedBytes: number;
}
/** A token bucket per project; refused callers should answer 429 with Retry-After. */
export interface RateLimiter {
    /** Takes `cost` from the project's bucket, or returns the seconds to wait when it is empty. */
    take(projectId: number, cost: number): number | undefined;
}
/** DRF's page envelope, as PostHog's REST API answers lists. */
export interface Page<T> {
    count: number;
    next: string | null;
    previous: string | null;
    results: T[];
}
export interface CursorPage<T> {
    results: T[];
    next: string | null;
}
/**
 * Per-route authentication: put one first among a route's handlers (after `crossOrigin`). A refused
 * request answers 401 with `not_authenticated` (no key), `authentication_failed` (a key this route
 * does not take), `missing_api_key` or `invalid_api_key` (public key). Every route under `/api` is
 * already behind the admin key (or, on the paths server SDKs call, a project's secret key).
 */
export interface RouteAuth {
    /** `Authorization: Bearer <admin API key>`; sets `ctx.state.admin = true`. */
    readonly adminKey: Middleware;
    /**
     * `Authorization: Bearer` with a project's secret key (`phs_…`), which sets `ctx.state.authProject`
     * to that project, or the admin key, which sets `ctx.state.admin`.
     */
    readonly secretKey: Middleware;
    /**
     * A project's public key (`phc_…`) as `?token=`, `X-API-Key` or `Authorization: Bearer`; sets
     * `ctx.state.project` (and the access log's project).
     */
    readonly publicKey: Middleware;
}
/** What a plugin that mounts routes needs; every failure is the catalogue's error. */
export interface HttpKit {
    readonly auth: RouteAuth;
    /** The Bearer token of `Authorization`, if any. */
    bearerToken(ctx: Context): string | undefined;
    /** Constant-time comparison of two keys of any length. */
    keysEqual(given: string, expected: string): boolean;
    /** The project named by the `:id` path parameter, or a 404 `not_found` naming `id`. */
    projectParam(ctx: Context): Promise<Project>;
    /** The body as bytes; over `limitBytes` (declared or received) a 413 `payload_too_large`. */
    readBody(ctx: Context, limitBytes: number): Promise<Buffer>;
    /** The body as JSON (`{}` when empty); over the limit a 413, not JSON a 400 `invalid_json`. */
    readJson(ctx: Context, limitBytes: number): Promise<unknown>;
    /**
     * The decoded JSON text of an SDK request, the way capture reads it: the body or `?data=`, in
     * any encoding the SDKs use (gzip, deflate, Brotli, lz64, base64, form `data=`), within `limits`.
     * With `allowEmpty`, a request with neither body nor `data=` gives undefined instead of a 400.
     */
    readPayload(ctx: Context, limits: PayloadLimits): Promise<string>;
    readPayload(ctx: Context, limits: PayloadLimits, allowEmpty: true): Promise<string | undefined>;
    /** The query with each parameter's first value (a repeated parameter keeps its first). */
    query(ctx: Context): Record<string, string | undefined>;
    /** `all` cut to the page `?limit=` (1-1000, default `defaultLimit`) and `?offset=` ask for, with links. */
    page<T>(ctx: Context, all: T[], defaultLimit?: number): Page<T>;
    /**
     * Keyset pagination: `rows` read with a limit of `limit + 1` in cursor order give this page (the
     * first `limit`) and the link to the next one (this URL with `?<param>=` the last row's cursor),
     * or null when there is none.
     */
    cursorPage<T>(ctx: Context, rows: T[], limit: number, param: string, cursorOf: (last: T) => string): CursorPage<T>;
    /** A per-project token bucket refilled at `perSecond` up to `burst` (default 10 seconds' worth). */
    rateLimiter(perSecond: number, burst?: number): RateLimiter;
}
