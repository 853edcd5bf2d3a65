/**
 * The date forms capture accepts for `timestamp` and `sent_at` (capture.md §1.8): RFC 3339
 * (also with a bare `±HH` offset), the ISO variants PostgreSQL and Python print, slash dates,
 * RFC 2822, and Unix epoch digits in seconds, milliseconds or nanoseconds. A form without a
 * zone is read as UTC, and a date without a time as midnight.
 */

const TIME = String.raw`(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*([AaPp][Mm])?`
const ZONE = String.raw`Z|UTC|UT|GMT|[ECMP][SD]T|[+-]\d{2}(?::?\d{2})?`

const ISO = new RegExp(String.raw`^(\d{4})-(\d{2})-(\d{2})(?:(?:[Tt]|\s+)${TIME})?\s*(${ZONE})?$`, 'i')
const SLASH_MDY = new RegExp(String.raw`^(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?:\s+${TIME})?$`)
const SLASH_YMD = new RegExp(String.raw`^(\d{4})/(\d{1,2})/(\d{1,2})(?:\s+${TIME})?$`)
const RFC_2822 =
  /^(?:[A-Za-z]{3},\s*)?(\d{1,2})\s+([A-Za-z]{3})\s+(\d{2,4})\s+(\d{2}):(\d{2})(?::(\d{2}))?\s*([+-]\d{4}|[A-Za-z]{1,3})$/
const EPOCH_DIGITS = /^\d{10}$|^\d{13}$|^\d{19}$/

const NAMED_ZONES: Record<string, number> = {
  Z: 0,
  UT: 0,
  UTC: 0,
  GMT: 0,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
}
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']

/** What `Date.prototype.toISOString` prints, the form nearly every SDK sends. */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

export function parseDate(input: string): Date | undefined {
  if (input.length === 24 && CANONICAL.test(input)) return canonical(input)
  const text = input.trim()
  if (EPOCH_DIGITS.test(text)) return fromEpochDigits(text)
  let match = ISO.exec(text)
  if (match) {
    const [, y, mo, d, h, mi, s, frac, ampm, zone] = match
    return build(num(y), num(mo), num(d), clock(h, mi, s, frac, ampm), zoneMinutes(zone))
  }
  match = SLASH_YMD.exec(text)
  if (match) {
    const [, y, mo, d, h, mi, s, frac, ampm] = match
    return build(num(y), num(mo), num(d), clock(h, mi, s, frac, ampm), 0)
  }
  match = SLASH_MDY.exec(text)
  if (match) {
    const [, mo, d, y, h, mi, s, frac, ampm] = match
    return build(fullYear(y!), num(mo), num(d), clock(h, mi, s, frac, ampm), 0)
  }
  match = RFC_2822.exec(text)
  if (match) {
    const [, d, monthName, y, h, mi, s, zone] = match
    const month = MONTHS.indexOf(monthName!.toLowerCase()) + 1
    if (month === 0) return undefined
    return build(rfc2822Year(y!), month, num(d), clock(h, mi, s, undefined, undefined), rfc2822Zone(zone!))
  }
  return undefined
}

interface Clock {
  hour: number
  minute: number
  second: number
  ms: number
}

function num(text: string | undefined): number {
  return text === undefined ? 0 : Number(text)
}

function clock(h?: string, mi?: string, s?: string, frac?: string, ampm?: string): Clock | undefined {
  let hour = num(h)
  if (ampm) {
    if (hour < 1 || hour > 12) return undefined
    hour = (hour % 12) + (ampm.toLowerCase() === 'pm' ? 12 : 0)
  }
  // Precision past the millisecond is dropped: a Date holds milliseconds.
  const ms = frac === undefined ? 0 : Number(frac.padEnd(3, '0').slice(0, 3))
  return { hour, minute: num(mi), second: num(s), ms }
}

function zoneMinutes(zone: string | undefined): number | undefined {
  if (zone === undefined) return 0
  const named = NAMED_ZONES[zone.toUpperCase()]
  if (named !== undefined) return named
  const digits = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)
  if (!digits) return undefined
  const hours = num(digits[2])
  const minutes = num(digits[3])
  if (hours > 23 || minutes > 59) return undefined
  return (digits[1] === '-' ? -1 : 1) * (hours * 60 + minutes)
}

/** RFC 2822 also allows the obsolete one-letter military zones, which carry no reliable offset. */
function rfc2822Zone(zone: string): number | undefined {
  if (/^[A-IK-Za-ik-z]$/.test(zone)) return 0
  return zoneMinutes(zone)
}

/** Two-digit years as POSIX `%y` reads them: 69–99 are 1900s, 00–68 are 2000s. */
function fullYear(text: string): number {
  const year = Number(text)
  if (text.length !== 2) return year
  return year >= 69 ? 1900 + year : 2000 + year
}

/** RFC 2822 §4.3: a two-digit year below 50 is in the 2000s, other short years count from 1900. */
function rfc2822Year(text: string): number {
  const year = Number(text)
  if (text.length === 2) return year < 50 ? 2000 + year : 1900 + year
  if (text.length === 3) return 1900 + year
  return year
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
}

/**
 * The canonical form read digit by digit: V8's own Date parsing and printing cost more than the
 * rest of an event's first form. Same checks and result as `build`, zone Z.
 */
function canonical(text: string): Date | undefined {
  const year = digits(text, 0, 4)
  const month = digits(text, 5, 7)
  const day = digits(text, 8, 10)
  const hour = digits(text, 11, 13)
  const minute = digits(text, 14, 16)
  const second = digits(text, 17, 19)
  const ms = digits(text, 20, 23)
  // Date.UTC reads years 0-99 as 1900-1999; build's setters do not
  if (year < 100) return build(year, month, day, { hour, minute, second, ms }, 0)
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60)
    return undefined
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms))
}

function digits(text: string, from: number, to: number): number {
  let value = 0
  for (let i = from; i < to; i++) value = value * 10 + text.charCodeAt(i) - 48
  return value
}

function build(
  year: number,
  month: number,
  day: number,
  time: Clock | undefined,
  offset: number | undefined,
): Date | undefined {
  if (!time || offset === undefined) return undefined
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  // Second 60 is a leap second; it reads as the first instant of the next minute.
  if (time.hour > 23 || time.minute > 59 || time.second > 60) return undefined
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(time.hour, time.minute, time.second, time.ms)
  return new Date(date.getTime() - offset * 60_000)
}

function fromEpochDigits(text: string): Date {
  if (text.length === 10) return new Date(Number(text) * 1000)
  if (text.length === 13) return new Date(Number(text))
  return new Date(Number(BigInt(text) / 1_000_000n))
}
