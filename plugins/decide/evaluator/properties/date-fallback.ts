import { naiveMillis } from './timezone.ts'

/**
 * A subset of the formats the server's last-resort parser (the `dateparser`
 * crate) accepts, with naive values read as UTC: unix timestamps by digit
 * count, RFC 2822, `YYYY-MM-DD[ hh:mm[:ss[.f]]] <zone>`, `Month D, YYYY
 * [hh:mm[:ss]] [zone]` and slash dates.
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const NAMED_ZONES: Record<string, number> = {
  UTC: 0,
  UT: 0,
  GMT: 0,
  Z: 0,
  EST: -5,
  EDT: -4,
  CST: -6,
  CDT: -5,
  MST: -7,
  MDT: -6,
  PST: -8,
  PDT: -7,
}
const NS_PER_MS = 1_000_000n

function zoneOffsetMinutes(zone: string | undefined): number | null {
  if (!zone) return 0
  const named = NAMED_ZONES[zone.toUpperCase()]
  if (named !== undefined) return named * 60
  const numeric = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)
  if (!numeric) return null
  const minutes = Number(numeric[2]) * 60 + Number(numeric[3] ?? 0)
  return numeric[1] === '-' ? -minutes : minutes
}

function monthIndex(name: string): number | null {
  const index = MONTHS.indexOf(name.slice(0, 3).toLowerCase())
  return index < 0 ? null : index + 1
}

interface Parts {
  year: number
  month: number
  day: number
  hour?: string
  minute?: string
  second?: string
  fraction?: string
  zone?: string
}

function instant(parts: Parts): bigint | null {
  const { year, month, day } = parts
  const hour = Number(parts.hour ?? 0)
  const minute = Number(parts.minute ?? 0)
  const second = Number(parts.second ?? 0)
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null
  const millis = naiveMillis({ year, month, day, hour, minute, second })
  if (new Date(millis).getUTCDate() !== day) return null
  const offset = zoneOffsetMinutes(parts.zone)
  if (offset === null) return null
  const nanos = BigInt((parts.fraction ?? '').slice(1).padEnd(9, '0').slice(0, 9) || '0')
  return BigInt(millis - offset * 60_000) * NS_PER_MS + nanos
}

const TIME = String.raw`(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?`
const ZONE = String.raw`(?:\s*([A-Za-z]{1,4}|[+-]\d{2}:?(?:\d{2})?))?`
const YMD = new RegExp(String.raw`^(\d{4})-(\d{2})-(\d{2})${TIME}${ZONE}$`)
const WORDY = new RegExp(String.raw`^([A-Za-z]{3,9})\.? (\d{1,2}),? (\d{4})${TIME}${ZONE}$`)
const RFC2822 = new RegExp(String.raw`^(?:[A-Za-z]{3}, ?)?(\d{1,2}) ([A-Za-z]{3}) (\d{4})${TIME}${ZONE}$`)
const MDY = new RegExp(String.raw`^(\d{1,2})/(\d{1,2})/(\d{4})${TIME}$`)
const YMD_SLASH = new RegExp(String.raw`^(\d{4})/(\d{1,2})/(\d{1,2})${TIME}$`)

export function parseFallbackDate(text: string): bigint | null {
  const trimmed = text.trim()
  if (/^\d{10}$/.test(trimmed)) return BigInt(trimmed) * 1_000_000_000n
  if (/^\d{13}$/.test(trimmed)) return BigInt(trimmed) * NS_PER_MS
  if (/^\d{16}$/.test(trimmed)) return BigInt(trimmed) * 1000n
  if (/^\d{19}$/.test(trimmed)) return BigInt(trimmed)
  let m = YMD.exec(trimmed)
  if (m)
    return instant({
      year: +m[1],
      month: +m[2],
      day: +m[3],
      hour: m[4],
      minute: m[5],
      second: m[6],
      fraction: m[7],
      zone: m[8],
    })
  m = WORDY.exec(trimmed)
  if (m) {
    const month = monthIndex(m[1])
    return month === null
      ? null
      : instant({ year: +m[3], month, day: +m[2], hour: m[4], minute: m[5], second: m[6], fraction: m[7], zone: m[8] })
  }
  m = RFC2822.exec(trimmed)
  if (m) {
    const month = monthIndex(m[2])
    return month === null
      ? null
      : instant({ year: +m[3], month, day: +m[1], hour: m[4], minute: m[5], second: m[6], fraction: m[7], zone: m[8] })
  }
  m = MDY.exec(trimmed)
  if (m)
    return instant({ year: +m[3], month: +m[1], day: +m[2], hour: m[4], minute: m[5], second: m[6], fraction: m[7] })
  m = YMD_SLASH.exec(trimmed)
  if (m)
    return instant({ year: +m[1], month: +m[2], day: +m[3], hour: m[4], minute: m[5], second: m[6], fraction: m[7] })
  return null
}
