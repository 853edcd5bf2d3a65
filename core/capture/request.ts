/**
 * Reads the JSON text of a capture request into its events, token and send time
 * (capture.md §1.3, §1.5, §1.12). Only the request's structure is checked here: an event
 * without a name or distinct_id is kept, for the validate step to drop and record.
 */
import { Type } from 'typebox'
import { Compile } from 'typebox/compile'
import { httpError } from '../errors.ts'
import { parseTimestamp } from './timestamp.ts'
import { batchTokenOf, resolveToken } from './token.ts'
import { MAX_NESTING, nestsDeeperThan } from './nesting.ts'
import { checkEventSizes } from './event-size.ts'

/** One event as the client sent it. */
export type WireEvent = Record<string, unknown>

export interface CaptureRequest {
  token: string
  events: WireEvent[]
  sentAt?: Date
  historicalMigration: boolean
}

const WireEventSchema = Type.Record(Type.String(), Type.Unknown())
const EventArray = Compile(Type.Array(WireEventSchema))
const BatchBody = Compile(
  Type.Object(
    {
      batch: Type.Array(WireEventSchema),
      historical_migration: Type.Optional(Type.Unknown()),
      sent_at: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: true },
  ),
)

/*
 * What the compiled checks above accept, for values of JSON.parse: typebox checks a Record's every
 * key against its string pattern through `Object.entries` (an array per key, per event), and the
 * answer is always true for a string key. The compiled checks stay for the error messages.
 */
const isWireEvent = (value: unknown): value is WireEvent =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
function isWireEventArray(value: unknown): value is WireEvent[] {
  if (!Array.isArray(value)) return false
  for (let i = 0; i < value.length; i++) if (!isWireEvent(value[i])) return false
  return true
}

/** Events the SDKs send that capture discards without a word. */
const SILENTLY_DROPPED = new Set(['$performance_event'])
const ENGAGE_PATH = /^\/engage(\/|$)/
/** Epoch values in a year up to 2020 come from old SDKs that sent seconds, not milliseconds. */
const LAST_YEAR_OF_SECONDS_SDKS = 2020

interface Shape {
  events: WireEvent[]
  batchToken?: string
  bodySentAt?: unknown
  historicalMigration: boolean
}

/** `maxEventBytes`: the limit of one event's JSON (event-size.ts); unset, none. */
export function parseCaptureRequest(
  text: string,
  opts: { path: string; query: Record<string, string | undefined>; maxEventBytes?: number },
): CaptureRequest {
  const shape = shapeOf(parseJson(text), opts.path)
  if (shape.events.length === 0) throw httpError('no_events', 'request holds no event')
  const token = resolveToken(shape.batchToken, shape.events)
  if (opts.maxEventBytes !== undefined) checkEventSizes(shape.events, text.length, opts.maxEventBytes)
  return {
    token,
    events: shape.events.filter((event) => !SILENTLY_DROPPED.has(event.event as string)),
    sentAt: sentAtOf(shape.bodySentAt, opts.query),
    historicalMigration: shape.historicalMigration,
  }
}

export function parseJson(text: string): unknown {
  if (nestsDeeperThan(text, MAX_NESTING))
    throw httpError('too_deeply_nested', `the request nests objects and arrays more than ${MAX_NESTING} levels deep`)
  try {
    return JSON.parse(text)
  } catch (error) {
    throw httpError('invalid_json', `failed to parse request: ${(error as Error).message}`)
  }
}

function shapeOf(json: unknown, path: string): Shape {
  if (Array.isArray(json)) {
    if (!isWireEventArray(json)) throw shapeError(EventArray.Errors(json)[0])
    return { events: json, historicalMigration: false }
  }
  if (typeof json === 'object' && json !== null && 'batch' in json) {
    const body = json as { batch: unknown; sent_at?: unknown; historical_migration?: unknown }
    if (!isWireEventArray(body.batch)) throw shapeError(BatchBody.Errors(json)[0], 'batch')
    return {
      events: body.batch,
      batchToken: batchTokenOf(body),
      bodySentAt: body.sent_at,
      historicalMigration: body.historical_migration === true,
    }
  }
  if (isWireEvent(json)) {
    const event: WireEvent = json
    // An engage object is a person update without an event name; /engage turns it into $identify.
    if (ENGAGE_PATH.test(path) && (event.event === undefined || event.event === null)) event.event = '$identify'
    return { events: [event], historicalMigration: false }
  }
  throw httpError('invalid_payload', 'request body must be a JSON object or an array of event objects')
}

function shapeError(error: { instancePath: string; message: string } | undefined, attr: string | null = null) {
  const where = error?.instancePath || '/'
  return httpError(
    'invalid_payload',
    `failed to parse request: ${where} ${error?.message ?? 'has the wrong shape'}`,
    attr,
  )
}

function sentAtOf(bodySentAt: unknown, query: Record<string, string | undefined>): Date | undefined {
  if (typeof bodySentAt === 'string') {
    const parsed = parseTimestamp(bodySentAt)
    if (parsed) return parsed
  }
  for (const key of ['sent_at', '_']) {
    const value = query[key]
    if (value === undefined || !/^\d{1,16}$/.test(value)) continue
    const at = new Date(Number(value))
    if (at.getUTCFullYear() > LAST_YEAR_OF_SECONDS_SDKS) return at
  }
  return undefined
}
