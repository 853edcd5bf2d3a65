/**
 * The size limit of one event (capture.md §1.11). PostHog's capture refuses a request holding an
 * event whose message would not fit in Kafka (1,000,000 bytes by default) with 413, and
 * posthog-node answers a 413 by halving its batch and sending the same events again, so the
 * events next to the oversized one are stored and only that one is given up. Here the limit also
 * bounds what one event can cost further on: its properties are stored, copied into warnings, and
 * its `$set` is stored a second time in `person_properties`.
 *
 * The size is the event's JSON as the service writes it again (JSON.stringify, UTF-8 bytes).
 */
import { type HttpError, httpError } from '../errors.ts'

/**
 * JSON.stringify writes at most 6 characters for one character of the parsed text (a lone
 * surrogate, as `\udXXX`; `1e20` becomes 21 digits, 5.25 per character), and a character is at most
 * 3 UTF-8 bytes: a body of up to limit / 6 characters cannot hold an event over the limit.
 */
const MAX_GROWTH = 6
/** Echoed in the error only when it is this short: the rest of the event came from the client too. */
const MAX_ECHOED_UUID = 64

export function eventTooLarge(
  index: number,
  event: Readonly<Record<string, unknown>>,
  bytes: number,
  limit: number,
): HttpError {
  const uuid = typeof event.uuid === 'string' && event.uuid.length <= MAX_ECHOED_UUID ? ` (uuid ${event.uuid})` : ''
  return httpError(
    'event_too_large',
    `maximum event size exceeded: event ${index} of the request${uuid} takes ${bytes} bytes as JSON; one event may take at most ${limit} bytes (server.eventLimitBytes)`,
  )
}

/** Throws a 413 naming the first event of `events` whose JSON is larger than `limit` bytes. */
export function checkEventSizes(
  events: ReadonlyArray<Readonly<Record<string, unknown>>>,
  bodyLength: number,
  limit: number,
): void {
  if (bodyLength * MAX_GROWTH <= limit) return
  for (let index = 0; index < events.length; index++) {
    const json = JSON.stringify(events[index])
    // a UTF-8 byte count is needed only when the characters alone do not settle it
    if (json.length * 3 <= limit) continue
    const bytes = Buffer.byteLength(json, 'utf8')
    if (bytes > limit) throw eventTooLarge(index, events[index]!, bytes, limit)
  }
}
