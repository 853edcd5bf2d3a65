/**
 * Wall clocks in the project's time zone, built on Intl so no zone database
 * ships with us. Instants are BigInt nanoseconds since the epoch because the
 * server compares dates at nanosecond precision (`is_date_exact`).
 */

export interface WallClock {
  year: number
  month: number // 1–12
  day: number
  hour: number
  minute: number
  second: number
  nanos: number // 0–999,999,999
}

const NS_PER_MS = 1_000_000n
const formatters = new Map<string, Intl.DateTimeFormat>()

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formatters.set(timeZone, formatter)
  }
  return formatter
}

/** An unknown or empty zone falls back to UTC rather than failing every date filter. */
export function resolveTimeZone(timeZone: string | null | undefined): string {
  if (!timeZone) return 'UTC'
  try {
    formatterFor(timeZone)
    return timeZone
  } catch {
    return 'UTC'
  }
}

/** Milliseconds since the epoch of a wall clock read as UTC (years below 100 included). */
export function naiveMillis(wall: Omit<WallClock, 'nanos'>): number {
  const date = new Date(0)
  date.setUTCFullYear(wall.year, wall.month - 1, wall.day)
  date.setUTCHours(wall.hour, wall.minute, wall.second, 0)
  return date.getTime()
}

export function naiveWall(millis: number, nanos = 0): WallClock {
  const date = new Date(millis)
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    nanos: nanos || date.getUTCMilliseconds() * 1_000_000,
  }
}

const FIXED_UTC = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT', 'Zulu', 'Universal'])

/** Offset of the zone from UTC at an instant, in milliseconds (local = UTC + offset). */
export function offsetMillis(timeZone: string, epochMillis: number): number {
  if (FIXED_UTC.has(timeZone)) return 0
  const parts: Record<string, string> = {}
  for (const part of formatterFor(timeZone).formatToParts(new Date(epochMillis))) parts[part.type] = part.value
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : Number(parts.year)
  const local = naiveMillis({
    year,
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  })
  const wholeSeconds = Math.floor(epochMillis / 1000) * 1000
  return local - wholeSeconds
}

export function wallClockAt(timeZone: string, epochMillis: number): WallClock {
  const millis = Math.floor(epochMillis)
  return naiveWall(millis + offsetMillis(timeZone, millis))
}

/**
 * The instant a wall clock names in a zone. In a fall-back overlap the
 * earlier instant wins; in a spring-forward gap there is none (null), as in
 * the server's `naive_to_utc_in_tz`.
 */
export function wallClockToInstant(timeZone: string, wall: WallClock): bigint | null {
  const naive = naiveMillis(wall)
  if (Number.isNaN(naive)) return null
  const day = 86_400_000
  const offsets = new Set([
    offsetMillis(timeZone, naive - day),
    offsetMillis(timeZone, naive),
    offsetMillis(timeZone, naive + day),
  ])
  const candidates: number[] = []
  for (const offset of offsets) {
    const utc = naive - offset
    if (offsetMillis(timeZone, utc) === offset) candidates.push(utc)
  }
  if (candidates.length === 0) return null
  return BigInt(Math.min(...candidates)) * NS_PER_MS + BigInt(wall.nanos)
}
