// Generated from core/plugin-api.ts by `npm run build:plugin-sdk`; do not edit.
import { randomFillSync } from 'node:crypto';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
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
 * rules, the persons plugin's person lookup…), tapped at `Stage.step`; a plugin that must run before or
 * after it, wherever it is listed, taps at `Stage.beforeStep` or `Stage.afterStep`.
 */
export const Stage = Object.freeze({
    /** Before the hook's own step: group-update strips `$groupidentify`'s person updates before the persons plugin reads them. */
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
 * or `{ ...properties }` followed by `properties.$ip = …` cost several times the copies below, and
 * leave slower objects behind.
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
const invalid = { status: 400, type: 'validation_error', retryable: false };
const unauthenticated = { status: 401, type: 'authentication_error', retryable: false };
const tooBig = { status: 413, type: 'validation_error', retryable: false };
const unsupported = { status: 415, type: 'validation_error', retryable: false };
const conflicting = { status: 409, type: 'validation_error', retryable: false };
/** Every error code the service answers with, and what the client sees for it. */
export const ERROR_CATALOGUE = {
    // 400: the request is wrong; the same request would fail again
    invalid_input: invalid,
    invalid_json: invalid,
    invalid_payload: invalid,
    invalid_request: invalid,
    required: invalid,
    empty_body: invalid,
    empty_payload: invalid,
    body_read_failed: invalid,
    no_events: invalid,
    too_deeply_nested: invalid,
    invalid_lz64: invalid,
    invalid_utf8: invalid,
    invalid_gzip: invalid,
    invalid_deflate: invalid,
    invalid_brotli: invalid,
    invalid_header_value: invalid,
    missing_required_headers: invalid,
    request_parsing_error: invalid,
    empty_batch: invalid,
    invalid_batch: invalid,
    missing_event_uuid: invalid,
    invalid_event_uuid: invalid,
    duplicate_event_uuid: invalid,
    missing_token: invalid,
    unique: invalid,
    not_static: invalid,
    too_many_backtracking_regexes: invalid,
    // 401: no key, or not a key this route accepts
    not_authenticated: unauthenticated,
    authentication_failed: unauthenticated,
    missing_api_key: unauthenticated,
    no_api_key: unauthenticated,
    invalid_api_key: unauthenticated,
    inconsistent_api_keys: unauthenticated,
    missing_authorization: unauthenticated,
    invalid_api_token: unauthenticated,
    not_found: { status: 404, type: 'validation_error', retryable: false },
    conflict: conflicting,
    stale_version: conflicting,
    payload_too_large: tooBig,
    event_too_large: tooBig,
    unsupported_content_type: unsupported,
    unsupported_encoding: unsupported,
    rate_limited: { status: 429, type: 'validation_error', retryable: true },
    internal_error: { status: 500, type: 'server_error', retryable: false },
    /** Storage or a step is unavailable or too slow right now. */
    unavailable: { status: 503, type: 'server_error', retryable: true },
};
/** Brand of the global symbol registry, so `instanceof HttpError` holds across the service's copy of this file and the published one a plugin imports. */
const HTTP_ERROR = Symbol.for('hedgerow.HttpError');
/** The statuses an SDK retries; an error outside the catalogue is retryable by its status. */
const RETRIED_STATUSES = new Set([429, 503]);
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
    /** Prefer `httpError(code, …)`, which takes status and type from the catalogue; this form is for codes outside it. */
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
        const entry = Object.hasOwn(ERROR_CATALOGUE, this.code)
            ? ERROR_CATALOGUE[this.code]
            : undefined;
        return entry?.status === this.status ? entry.retryable : RETRIED_STATUSES.has(this.status);
    }
    toBody() {
        return { type: this.type, code: this.code, detail: this.detail, attr: this.attr };
    }
}
/** The error the catalogue describes for `code`, with this request's `detail` and offending field. */
export function httpError(code, detail, attr = null) {
    const { status, type } = ERROR_CATALOGUE[code];
    return new HttpError(status, type, code, detail, attr);
}
/**
 * An internal failure the client should retry (a lost optimistic race, definitions that kept
 * changing while read): a step or read that throws it makes the request answer 503 `unavailable`.
 */
export function retryableError(message, options) {
    return Object.assign(new Error(message, options), { retryable: true });
}
/** A write that kept losing optimistic races with concurrent writers: retryable, so the request answers 503 and the SDK sends it again. */
export function contentionError(what) {
    return retryableError(`${what}: too many concurrent writers, retry`);
}
/** A 400 with any code: for codes outside the catalogue. */
export const badRequest = (code, detail, attr = null) => new HttpError(400, 'validation_error', code, detail, attr);
/** A 401 with any code: for codes outside the catalogue. */
export const unauthorized = (code, detail, attr = null) => new HttpError(401, 'authentication_error', code, detail, attr);
export const tooLarge = (detail) => httpError('payload_too_large', detail);
export const unavailable = (detail) => httpError('unavailable', detail);
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
/*
 * Capture rules that plugins apply to ids of their own. An event that reaches the sinks always has
 * a uuid, whatever the steps did: the core gives one to an event that still has none (see
 * `core/event.ts`), since the sinks' unique (project, uuid) key would otherwise keep one of them.
 */
export const MAX_DISTINCT_ID_CHARS = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The hyphenated 8-4-4-4-12 hex form, any version, either case. */
export function isUuid(text) {
    return UUID.test(text);
}
/** The 48-bit millisecond field of a UUIDv7 ends in the year 10889. */
const MAX_V7_MS = 2 ** 48 - 1;
/** Cryptographic random bytes drawn in blocks: one `randomBytes` call per event cost 3-4 % of capture CPU. */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;
/** The offset in POOL of `count` fresh random bytes. */
function randomOffset(count) {
    if (poolOffset + count > POOL.length) {
        randomFillSync(POOL);
        poolOffset = 0;
    }
    const at = poolOffset;
    poolOffset += count;
    return at;
}
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
/**
 * RFC 9562 version 7: 48 bits of Unix milliseconds taken from `at`, then the version nibble,
 * 12 random bits, the `10` variant and 62 random bits. Times before 1970 use 0.
 */
export function uuidv7(at = new Date()) {
    const ms = Math.min(Math.max(Math.floor(at.getTime()) || 0, 0), MAX_V7_MS);
    // built from a hex table: a Buffer, its hex string and five slices per event showed in profiles
    const high = Math.floor(ms / 2 ** 32);
    const low = ms >>> 0;
    const r = randomOffset(10);
    const b = POOL;
    return (HEX[(high >>> 8) & 0xff] +
        HEX[high & 0xff] +
        HEX[low >>> 24] +
        HEX[(low >>> 16) & 0xff] +
        '-' +
        HEX[(low >>> 8) & 0xff] +
        HEX[low & 0xff] +
        '-' +
        HEX[0x70 | (b[r] & 0x0f)] +
        HEX[b[r + 1]] +
        '-' +
        HEX[0x80 | (b[r + 2] & 0x3f)] +
        HEX[b[r + 3]] +
        '-' +
        HEX[b[r + 4]] +
        HEX[b[r + 5]] +
        HEX[b[r + 6]] +
        HEX[b[r + 7]] +
        HEX[b[r + 8]] +
        HEX[b[r + 9]]);
}
/** The first `max` Unicode scalars (code points), not UTF-16 units and not bytes. */
export function cutToScalars(text, max) {
    if (text.length <= max)
        return text;
    let scalars = 0;
    let end = 0;
    for (const char of text) {
        if (scalars === max)
            break;
        scalars++;
        end += char.length;
    }
    return text.slice(0, end);
}
/**
 * Text made a distinct_id (capture.md §1.6): NUL replaced by U+FFFD, cut to 200 Unicode scalars.
 * The ids an event names besides its own (`$anon_distinct_id`, the `alias` of `$create_alias`)
 * become distinct ids of a person too, so a step cuts them the same way.
 */
export function asDistinctId(text) {
    return cutToScalars(text, MAX_DISTINCT_ID_CHARS).replaceAll('\0', '\uFFFD');
}
const compiled = new WeakMap();
function validatorOf(schema) {
    let validator = compiled.get(schema);
    if (!validator)
        compiled.set(schema, (validator = Compile(schema)));
    return validator;
}
/** Checks `value` (after applying the schema's defaults to a copy when `withDefaults`), without throwing. */
export function check(schema, value, withDefaults = false) {
    const candidate = withDefaults ? Value.Default(schema, Value.Clone(value)) : value;
    const validator = validatorOf(schema);
    if (validator.Check(candidate))
        return { ok: true, value: candidate };
    const errors = [...validator.Errors(candidate)];
    // an unknown key is reported twice (a `false` schema and the keyword); the first names the key
    const first = errors.find((e) => e.keyword !== 'additionalProperties') ?? errors[0];
    const missing = first?.keyword === 'required'
        ? first.params.requiredProperties?.[0]
        : undefined;
    if (missing !== undefined)
        return { ok: false, path: `${first.instancePath}/${missing}`, reason: 'is required' };
    const reason = first?.keyword === 'boolean'
        ? 'unknown key'
        : first?.keyword === 'const' || first?.keyword === 'anyOf'
            ? 'is not one of the allowed values'
            : (first?.message ?? 'invalid');
    return { ok: false, path: first?.instancePath ?? '', reason };
}
/**
 * `value` (a request body, a query) checked against `schema`, or the standard 400: code
 * `invalid_input`, the offending field as `attr` (dotted) and in the detail.
 */
export function parseWith(schema, value) {
    const result = check(schema, value);
    if (result.ok)
        return result.value;
    const attr = result.path.replace(/^\//, '').replaceAll('/', '.') || null;
    throw httpError('invalid_input', attr ? `${attr}: ${result.reason}` : `the request body: ${result.reason}`, attr);
}
/** Connection settings of a NATS server, as plugin options; spread into an options schema. */
export const natsConnectionFields = {
    servers: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], {
        default: 'nats://127.0.0.1:4222',
    }),
    connectTimeoutMs: Type.Integer({ minimum: 1, default: 5000 }),
    /** Wait between reconnection attempts after the connection is lost (it is retried forever). */
    reconnectTimeWaitMs: Type.Integer({ minimum: 1, default: 2000 }),
    token: Type.Optional(Type.String({ minLength: 1 })),
    user: Type.Optional(Type.String({ minLength: 1 })),
    pass: Type.Optional(Type.String({ minLength: 1 })),
};
