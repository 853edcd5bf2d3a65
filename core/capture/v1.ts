/**
 * PostHog's capture v1 batch (`POST /i/v1/analytics/events`, posthog-python's
 * `capture_mode="v1"`): Bearer authentication, required PostHog-* headers, an envelope
 * `{created_at, historical_migration?, batch: [...]}` whose events carry typed `options`, and a
 * per-event answer `{results: {<uuid>: {result, details?}}}`. Mirrors PostHog's capture service:
 * what is wrong with the request or the batch refuses it whole (4xx); what is wrong with one event
 * drops that event, reported by its uuid.
 */
import { httpError } from '../errors.ts'
import type { WireEvent } from './request.ts'
import { tokenProblem } from './token.ts'
import { isUuid } from './uuid.ts'

export type EventResult = { result: 'ok' | 'drop' | 'warning' | 'retry'; details?: string }

export interface V1Request {
  token: string
  /** PostHog-Request-Timestamp: the client's clock when it sent, for skew correction. */
  sentAt: Date
  /** `$lib` and `$lib_version` from PostHog-Sdk-Info, which v1 SDKs no longer put in properties. */
  lib?: { name: string; version: string }
}

export interface V1Batch {
  historicalMigration: boolean
  /** The events to ingest, in wire shape, in batch order. */
  events: WireEvent[]
  /** Every event's result by uuid; the ingested ones are `ok` until the pipeline says otherwise. */
  results: Map<string, EventResult>
}

const REQUIRED_HEADERS = [
  'content-type',
  'user-agent',
  'posthog-sdk-info',
  'posthog-attempt',
  'posthog-request-id',
  'posthog-request-timestamp',
]
export const V1_ENCODINGS = ['gzip', 'deflate', 'br'] as const
/** PostHog's limits: the event name and the distinct id are refused past them, not cut. */
const MAX_EVENT_NAME_LENGTH = 200
const MAX_DISTINCT_ID_LENGTH = 200
const MAX_SDK_INFO_LENGTH = 200
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

const invalidHeader = (detail: string) => httpError('invalid_header_value', detail)

function rfc3339(text: unknown): Date | undefined {
  if (typeof text !== 'string' || !RFC3339.test(text)) return undefined
  const date = new Date(text)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/** The request's headers, checked as PostHog's capture v1 checks them. */
export function readV1Headers(header: (name: string) => string): V1Request {
  const authorization = header('authorization')
  if (!authorization)
    throw httpError('missing_authorization', 'the request has no Authorization header: send "Bearer <project API key>"')
  const missing = REQUIRED_HEADERS.filter((name) => !header(name))
  if (missing.length > 0)
    throw httpError('missing_required_headers', `request is missing required headers: ${missing.join(', ')}`)
  if (!/^bearer /i.test(authorization) || authorization.length <= 7)
    throw invalidHeader('Authorization must use the Bearer scheme')
  const token = authorization.slice(7).trim()
  if (tokenProblem(token)) throw httpError('invalid_api_token', 'the provided API token is not valid')
  const mime = header('content-type').split(';')[0].trim().toLowerCase()
  if (mime !== 'application/json')
    throw httpError('unsupported_content_type', `unsupported content type: ${header('content-type')}`)
  if (!isUuid(header('posthog-request-id')))
    throw invalidHeader(`PostHog-Request-Id is not a valid UUID: ${header('posthog-request-id')}`)
  if (!/^[1-9]\d{0,8}$/.test(header('posthog-attempt')))
    throw invalidHeader(`PostHog-Attempt must be a positive integer: ${header('posthog-attempt')}`)
  const sentAt = rfc3339(header('posthog-request-timestamp'))
  if (!sentAt)
    throw invalidHeader(`PostHog-Request-Timestamp is not valid RFC 3339: ${header('posthog-request-timestamp')}`)
  return { token, sentAt, lib: libOf(header('posthog-sdk-info')) }
}

/** `<lib>/<version>`, split at the last slash; an unusable value sets nothing. */
function libOf(sdkInfo: string): V1Request['lib'] {
  if (sdkInfo.length > MAX_SDK_INFO_LENGTH) return undefined
  const slash = sdkInfo.lastIndexOf('/')
  const [name, version] = [sdkInfo.slice(0, slash).trim(), sdkInfo.slice(slash + 1).trim()]
  return slash > 0 && name && version ? { name, version } : undefined
}

/** Content-Encoding, if any, as one of the codecs the body can be read with. */
export function v1Encoding(value: string): (typeof V1_ENCODINGS)[number] | undefined {
  if (!value || value.toLowerCase() === 'identity') return undefined
  const encoding = V1_ENCODINGS.find((e) => e === value.toLowerCase())
  if (!encoding)
    throw httpError(
      'unsupported_encoding',
      `unsupported content encoding: ${value} (gzip, deflate and br are read here)`,
    )
  return encoding
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The typed options, back to the properties the pipeline reads; null when one has the wrong type. */
const OPTIONS: Array<[string, string, (v: unknown) => unknown]> = [
  ['cookieless_mode', '$cookieless_mode', toBool],
  ['disable_skew_correction', '$ignore_sent_at', toBool],
  ['product_tour_id', '$product_tour_id', toText],
  ['process_person_profile', '$process_person_profile', toBool],
]

function toBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value
  if (typeof value === 'number') return value !== 0
  const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined
  return text === 'true' || text === '1' ? true : text === 'false' || text === '0' ? false : undefined
}

function toText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  return typeof value === 'number' && Number.isInteger(value) ? String(value) : undefined
}

function optionProperties(options: unknown): Record<string, unknown> | null {
  if (options === undefined || options === null) return {}
  if (!isRecord(options)) return null
  const properties: Record<string, unknown> = {}
  for (const [name, property, coerce] of OPTIONS) {
    if (options[name] === undefined || options[name] === null) continue
    const value = coerce(options[name])
    if (value === undefined) return null
    properties[property] = value
  }
  return properties
}

/** Why one event is dropped, as PostHog tags it; undefined when it is fine. */
function dropReason(event: Record<string, unknown>): string | undefined {
  if (event.event === '$performance_event') return 'dropped_performance_event'
  if (typeof event.event !== 'string' || event.event === '') return 'missing_event_name'
  if (event.event.length > MAX_EVENT_NAME_LENGTH) return 'event_name_too_long'
  if (typeof event.distinct_id !== 'string' || event.distinct_id.trim() === '') return 'missing_distinct_id'
  if (event.distinct_id.trim().length > MAX_DISTINCT_ID_LENGTH) return 'distinct_id_too_large'
  if (!rfc3339(event.timestamp)) return 'invalid_event_timestamp'
  if (event.properties !== undefined && !isRecord(event.properties)) return 'malformed_event_properties'
  return undefined
}

/**
 * The envelope and its events: refuses the batch whole where PostHog does, else one result per
 * event. An event whose JSON passes `maxEventBytes` (server.eventLimitBytes) is dropped alone as
 * `event_too_big`, which v1's per-event answer can say where /batch/ must refuse the request.
 */
export function readV1Batch(body: unknown, request: V1Request, maxEventBytes = Infinity): V1Batch {
  if (!isRecord(body) || !Array.isArray(body.batch) || typeof body.created_at !== 'string') {
    throw httpError(
      'request_parsing_error',
      'failed to parse request: the body must be {"created_at": "<RFC 3339>", "batch": [events]}',
    )
  }
  if (body.batch.length === 0) throw httpError('empty_batch', 'request batch is empty')
  if (!rfc3339(body.created_at))
    throw httpError('invalid_batch', `invalid batch: created_at is not valid RFC 3339: ${body.created_at}`)
  const results = new Map<string, EventResult>()
  const events: WireEvent[] = []
  body.batch.forEach((raw, index) => {
    if (!isRecord(raw) || typeof raw.uuid !== 'string' || raw.uuid.trim() === '')
      throw httpError('missing_event_uuid', `event ${index} was submitted without a uuid`, `batch.${index}.uuid`)
    const uuid = raw.uuid.trim()
    if (!isUuid(uuid))
      throw httpError('invalid_event_uuid', `event ${index} has an invalid uuid: ${uuid}`, `batch.${index}.uuid`)
    const key = uuid.toLowerCase()
    if (results.has(key))
      throw httpError('duplicate_event_uuid', `duplicate event uuid: ${uuid}`, `batch.${index}.uuid`)
    const reason =
      dropReason(raw) ?? (Buffer.byteLength(JSON.stringify(raw)) > maxEventBytes ? 'event_too_big' : undefined)
    const options = reason ? undefined : optionProperties(raw.options)
    if (reason || !options) return void results.set(key, { result: 'drop', details: reason ?? 'invalid_options' })
    results.set(key, { result: 'ok' })
    events.push(toWireEvent(raw, uuid, options, request))
  })
  return { historicalMigration: body.historical_migration === true, events, results }
}

/** The event as /batch/ would carry it, so the pipeline treats both protocols alike. */
function toWireEvent(
  raw: Record<string, unknown>,
  uuid: string,
  options: Record<string, unknown>,
  request: V1Request,
): WireEvent {
  const properties: Record<string, unknown> = { ...(raw.properties as Record<string, unknown> | undefined), ...options }
  if (typeof raw.session_id === 'string') properties.$session_id = raw.session_id
  if (typeof raw.window_id === 'string') properties.$window_id = raw.window_id
  if (request.lib) {
    properties.$lib = request.lib.name
    properties.$lib_version = request.lib.version
  }
  return {
    event: raw.event,
    uuid,
    distinct_id: (raw.distinct_id as string).trim(),
    timestamp: raw.timestamp,
    properties,
  }
}
