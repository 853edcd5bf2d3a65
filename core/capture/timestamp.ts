/**
 * The time an event happened, in server time (capture.md §1.8).
 */
import { parseDate } from './date-formats.ts'

/** An event claimed to be more than this far in the future is stamped with the receive time. */
const FUTURE_CUTOFF_MS = 23 * 3600 * 1000
const MIN_YEAR = 0
const MAX_YEAR = 9999

export interface TimestampInput {
  /** The event's `timestamp` as sent: a date string, or a number read as its decimal text. */
  timestamp?: unknown
  /** The event's `offset`: milliseconds before `now`. */
  offset?: unknown
  /** When the client sent the request, by the client's clock. */
  sentAt?: Date
  /** When the server received the request. */
  now: Date
  /** `properties.$ignore_sent_at`: skip the clock-skew correction. */
  ignoreSentAt?: boolean
}

export function computeTimestamp(input: TimestampInput): Date {
  const now = input.now.getTime()
  let result = now

  const timestamp = timestampText(input.timestamp)
  const parsed = timestamp === undefined ? undefined : parseTimestamp(timestamp)
  if (parsed) {
    // The client's clock runs (sentAt − now) ahead of ours; take that off its timestamp.
    const skew = input.sentAt && !input.ignoreSentAt ? input.sentAt.getTime() - now : 0
    result = parsed.getTime() - skew
  }

  const offset = offsetMs(input.offset)
  if (offset !== undefined) result = now - offset

  if (result - now > FUTURE_CUTOFF_MS) result = now
  const date = new Date(result)
  const year = date.getUTCFullYear()
  if (Number.isNaN(year) || year < MIN_YEAR || year > MAX_YEAR) return new Date(0)
  return date
}

/** Parses an event or sent_at date string in any of the forms capture accepts. */
export function parseTimestamp(text: string): Date | undefined {
  return parseDate(text)
}

function timestampText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return undefined
}

function offsetMs(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : undefined
}
