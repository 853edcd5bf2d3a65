import { parseFallbackDate } from './date-fallback.ts'
import { parseRelativeDate } from './relative-date.ts'
import { wallClockToInstant } from './timezone.ts'
import { parseRustF64 } from './values.ts'
import { TextMemo } from './memo.ts'

/**
 * Date operators compare instants (BigInt ns). Both sides read naive strings
 * in the project's zone and honour explicit offsets, as the server does so it
 * agrees with HogQL cohort evaluation.
 */

export type DateOperator = 'is_date_before' | 'is_date_after' | 'is_date_exact'

const NS_PER_SECOND = 1_000_000_000n
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
const DATE_ONLY = /^(\d{4})-(\d{1,2})-(\d{1,2})$/
const NAIVE_DATETIME = /^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d+)?)?$/

function fractionNanos(fraction: string | undefined): number {
  return Number((fraction ?? '').slice(1).padEnd(9, '0').slice(0, 9) || '0')
}

function validCalendar(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): boolean {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false
  const probe = new Date(0)
  probe.setUTCFullYear(year, month - 1, day)
  return probe.getUTCDate() === day
}

function parseRfc3339(text: string): bigint | null {
  const m = RFC3339.exec(text)
  if (!m) return null
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number)
  if (!validCalendar(year, month, day, hour, minute, Math.min(second, 59))) return null
  let offsetMinutes = 0
  if (m[8] !== 'Z' && m[8] !== 'z') {
    const [h, mm] = m[8].slice(1).split(':').map(Number)
    if (h > 23 || mm > 59) return null
    offsetMinutes = (h * 60 + mm) * (m[8].startsWith('-') ? -1 : 1)
  }
  const probe = new Date(0)
  probe.setUTCFullYear(year, month - 1, day)
  probe.setUTCHours(hour, minute, second, 0)
  return BigInt(probe.getTime() - offsetMinutes * 60_000) * 1_000_000n + BigInt(fractionNanos(m[7]))
}

// Flags repeat the same filter values ("-30d") and a request repeats the same property values,
// and zone arithmetic through Intl is slow, so parsed instants are memoised by zone and text
// (and now, for relative dates).
const CACHE_LIMIT = 2000
const parsed = new TextMemo<bigint | null>(CACHE_LIMIT)

/** The filter-value parser (§8 date rules), also used for string property values. */
const RELATIVE = /^-?\d+[hdwmy]$/

export function parseDateInZone(text: string, timeZone: string, nowMillis: number): bigint | null {
  if (text.length > 64) return parseUncached(text, timeZone, nowMillis)
  // Only relative dates depend on now; absolute ones stay cached across requests.
  const relative = RELATIVE.test(text)
  const cacheKey = `${timeZone}\u0000${relative ? nowMillis : ''}\u0000${text}`
  const cached = parsed.get(cacheKey)
  if (cached !== undefined) return cached
  const instant = parseUncached(text, timeZone, nowMillis)
  parsed.remember(cacheKey, instant)
  return instant
}

function parseUncached(text: string, timeZone: string, nowMillis: number): bigint | null {
  const relative = parseRelativeDate(text, timeZone, nowMillis)
  if (relative !== null) return relative
  const rfc3339 = parseRfc3339(text)
  if (rfc3339 !== null) return rfc3339
  let m = DATE_ONLY.exec(text)
  if (m) {
    const [year, month, day] = m.slice(1, 4).map(Number)
    if (!validCalendar(year, month, day)) return null
    return wallClockToInstant(timeZone, { year, month, day, hour: 0, minute: 0, second: 0, nanos: 0 })
  }
  m = NAIVE_DATETIME.exec(text)
  if (m) {
    const [year, month, day, hour, minute] = m.slice(1, 6).map(Number)
    const second = Number(m[6] ?? 0)
    if (!validCalendar(year, month, day, hour, minute, second)) return null
    return wallClockToInstant(timeZone, { year, month, day, hour, minute, second, nanos: fractionNanos(m[7]) })
  }
  return parseFallbackDate(text)
}

/** Rust's saturating `as` casts, which the server's timestamp conversion relies on. */
function saturatingInt(value: number): bigint {
  if (Number.isNaN(value)) return 0n
  const max = 9223372036854775807n
  if (value >= 9.223372036854776e18) return max
  if (value <= -9.223372036854776e18) return -max - 1n
  return BigInt(Math.trunc(value))
}

/** Unix seconds with a fraction, converted as the server does (`floor`, then nanos rounded from `% 1`). */
export function unixSecondsToInstant(seconds: number): bigint | null {
  const whole = saturatingInt(Math.floor(seconds))
  const rawNanos = Math.sign((seconds % 1) * 1e9) * Math.round(Math.abs((seconds % 1) * 1e9))
  const nanos = Number.isNaN(rawNanos) ? 0 : Math.min(Math.max(rawNanos, 0), 4294967295)
  // chrono keeps roughly ±262,000 years and rejects nanos of two seconds or more.
  if (whole > 8_210_266_876_799n || whole < -8_334_601_228_800n || nanos >= 2_000_000_000) return null
  return whole * NS_PER_SECOND + BigInt(nanos)
}

/** The property side: numbers and numeric text are Unix seconds; other text is read like a filter value. */
export function propertyDate(value: unknown, timeZone: string, nowMillis: number): bigint | null {
  if (typeof value === 'number') return unixSecondsToInstant(value)
  if (typeof value !== 'string') return null
  const seconds = parseRustF64(value)
  if (seconds !== null) return unixSecondsToInstant(seconds)
  return parseDateInZone(value, timeZone, nowMillis)
}

export function compareDates(
  operator: DateOperator,
  filterValue: unknown,
  propertyValue: unknown,
  timeZone: string,
  nowMillis: number,
): boolean {
  const x = propertyDate(propertyValue, timeZone, nowMillis)
  if (x === null || typeof filterValue !== 'string') return false
  const v = parseDateInZone(filterValue, timeZone, nowMillis)
  return v !== null && instantsMatch(operator, x, v)
}

function instantsMatch(operator: DateOperator, x: bigint, v: bigint): boolean {
  if (operator === 'is_date_before') return x < v
  if (operator === 'is_date_after') return x > v
  return x === v
}

/**
 * compareDates for one filter value (compiled filters), its instant kept for the last zone (and
 * now, for a relative date) it was read in: requests repeat them, and reading the filter value
 * through the shared memo meant building and hashing a key per call. Null when nothing matches.
 */
export function dateMatcher(
  operator: DateOperator,
  filterValue: unknown,
): ((propertyValue: unknown, timeZone: string, nowMillis: number) => boolean) | null {
  if (typeof filterValue !== 'string') return null
  const relative = RELATIVE.test(filterValue)
  let readIn: string | undefined
  let readAt = 0
  let v: bigint | null = null
  return (propertyValue, timeZone, nowMillis) => {
    const x = propertyDate(propertyValue, timeZone, nowMillis)
    if (x === null) return false
    if (timeZone !== readIn || (relative && nowMillis !== readAt)) {
      v = parseDateInZone(filterValue, timeZone, nowMillis)
      readIn = timeZone
      readAt = nowMillis
    }
    return v !== null && instantsMatch(operator, x, v)
  }
}
