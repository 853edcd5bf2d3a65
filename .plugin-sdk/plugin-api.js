// Generated from core/plugin-api.ts by `npm run build:plugin-sdk`; do not edit.
/** The loader refuses plugins built against another version of this contract. */
export const API_VERSION = 1;
export function drop(reason, details) {
    return Object.freeze({ dropped: true, reason, details });
}
export function isDropped(value) {
    return typeof value === 'object' && value !== null && value.dropped === true;
}
/**
 * Where a tap runs among the taps of its hook (tapable's `stage`): by stage, then in the order the
 * config lists the plugins. Each hook has one own step, the built-in named after it (validate's
 * rules, alias-resolve's person lookup…), tapped at `Stage.step`; a plugin that must run before or
 * after it, wherever it is listed, taps at `Stage.beforeStep` or `Stage.afterStep`.
 */
export const Stage = Object.freeze({
    /** Before the hook's own step: group-update strips `$groupidentify`'s person updates before alias-resolve reads them. */
    beforeStep: -1000,
    /** The hook's own step, and the default of every tap. */
    step: 0,
    /** After the hook's own step, seeing the event it left: spike-detection and group-update's key check after validate's rules. */
    afterStep: 100,
});
/** Identity function that gives plugin authors type inference for their options. */
export function definePlugin(definition) {
    return definition;
}
/** What `crossOrigin` carries, found by the core's CORS (a symbol of the global registry, so the published copy of this file marks routes the same way). */
export const CROSS_ORIGIN = Symbol.for('hedgerow.crossOrigin');
/**
 * Put first among a route's handlers when browsers call it from pages of other sites (capture,
 * /flags, OFREP): the route answers CORS permissively, as PostHog's public endpoints do — the
 * Origin echoed with credentials, or `*` without one — preflights included. Routes without it
 * answer cross-origin only to the operator's `server.adminCorsOrigins`.
 */
export const crossOrigin = Object.assign(function crossOrigin(ctx, next) {
    grantCrossOrigin(ctx);
    return next();
}, { [CROSS_ORIGIN]: true });
/** The headers of a granted cross-origin response. */
export function grantCrossOrigin(ctx) {
    const origin = ctx.get('Origin');
    if (origin) {
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Allow-Credentials', 'true');
        ctx.vary('Origin');
    }
    else {
        ctx.set('Access-Control-Allow-Origin', '*');
    }
}
/*
 * Node 20's V8 makes an object spread that adds keys the source lacks slow: `{ ...event, person }`
 * or `{ ...properties }` followed by `properties.$ip = …` cost 0.7-2.3 µs each against ~0.1-0.2 µs
 * for the copies below (measured on the capture bench's events), and leave slower objects behind.
 * The steps run several per event, so these two helpers make the same objects the cheap way.
 */
/** `{ ...event, ...fields }`, for events and other objects whose keys are the service's own. */
export function withFields(event, fields) {
    return Object.assign({}, event, fields);
}
/**
 * `{ ...record }` for objects keyed by client data: the own enumerable keys in order, and a key
 * named `__proto__` stays an own property as with a spread (never the prototype setter). Keys in
 * `omit` are left out: built without them, since deleting from a copy makes a slow object.
 */
export function copyRecord(source, omit) {
    const copy = {};
    for (const key of Object.keys(source)) {
        if (omit?.includes(key))
            continue;
        if (key === '__proto__')
            Object.defineProperty(copy, key, { value: source[key], enumerable: true, writable: true, configurable: true });
        else
            copy[key] = source[key];
    }
    return copy;
}
/** Brand of the global symbol registry, so `instanceof HttpError` holds across the service's copy of this file and the published one a plugin imports. */
const HTTP_ERROR = Symbol.for('hedgerow.HttpError');
export class HttpError extends Error {
    status;
    type;
    code;
    detail;
    attr;
    static [Symbol.hasInstance](value) {
        if (this !== HttpError)
            return Function.prototype[Symbol.hasInstance].call(this, value);
        return typeof value === 'object' && value !== null && value[HTTP_ERROR] === true;
    }
    constructor(status, type, code, detail, attr = null) {
        super(detail);
        this.status = status;
        this.type = type;
        this.code = code;
        this.detail = detail;
        this.attr = attr;
        this.name = 'HttpError';
        Object.defineProperty(this, HTTP_ERROR, { value: true });
    }
    get retryable() {
        return this.status === 503 || this.status === 429;
    }
    toBody() {
        return { type: this.type, code: this.code, detail: this.detail, attr: this.attr };
    }
}
export const badRequest = (code, detail, attr = null) => new HttpError(400, 'validation_error', code, detail, attr);
export const unauthorized = (code, detail, attr = null) => new HttpError(401, 'authentication_error', code, detail, attr);
export const tooLarge = (detail) => new HttpError(413, 'validation_error', 'payload_too_large', detail);
export const unavailable = (detail) => new HttpError(503, 'server_error', 'unavailable', detail);
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
]);
/**
 * Whether the client should retry the request: the database is unreachable, a step timed out, or
 * an HttpError said so. Everything else is a property of the request and would fail again.
 */
export function isRetryable(error) {
    if (typeof error !== 'object' || error === null)
        return false;
    if (error instanceof HttpError)
        return error.retryable;
    const e = error;
    if (e.retryable === true)
        return true;
    if (typeof e.name === 'string' && TRANSIENT_DRIVER_ERRORS.has(e.name))
        return true;
    if (typeof e.hasErrorLabel === 'function' && (e.hasErrorLabel('RetryableWriteError') || e.hasErrorLabel('ResetPool')))
        return true;
    return e.cause !== undefined && e.cause !== error && isRetryable(e.cause);
}
/** An event of a sink batch as its stored document. */
export function toDocument(event, batch) {
    const doc = {
        project_id: batch.project.id,
        uuid: event.uuid,
        event: event.event,
        distinct_id: event.distinctId,
        properties: event.properties,
        timestamp: event.timestamp,
        created_at: batch.receivedAt,
        person_mode: event.person?.mode ?? (event.personless ? 'propertyless' : 'full'),
    };
    if (event.person) {
        doc.person_id = event.person.id;
        doc.person_properties = event.person.properties;
        doc.person_created_at = event.person.createdAt;
    }
    if (event.historicalMigration)
        doc.historical_migration = true;
    return doc;
}
/*
 * The data model plugins share. Stored shapes other plugins read are declared here, so that a
 * third-party step can write what the built-ins read; the indexes and the readers the core
 * provides live in core/model/.
 */
/** MongoDB's error code for a write a unique index refused: another writer won the race, or the write was a retry. */
export const DUPLICATE_KEY = 11000;
/** Whether `error` (a driver error, or one write error of a bulk write) is a unique index refusing a duplicate. */
export function isDuplicateKey(error) {
    return typeof error === 'object' && error !== null && error.code === DUPLICATE_KEY;
}
/** The collections of groups: group-update writes them (decide adds the group types of imported definitions). */
export const GROUP_COLLECTIONS = {
    groups: 'groups',
    groupTypeMappings: 'group_type_mappings',
};
