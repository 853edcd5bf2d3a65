import { naiveMillis, naiveWall, wallClockAt, wallClockToInstant, type WallClock } from './timezone.ts'

const RELATIVE_DATE = /^-?([0-9]+)([hdwmy])$/
const HOUR = 3_600_000

function lastDayOfMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

/** Calendar-aware subtraction on a naive wall clock; months step one at a time, clamping the day each step. */
function subtract(now: WallClock, amount: number, unit: string): WallClock {
  if (unit === 'h' || unit === 'd' || unit === 'w') {
    const hours = unit === 'h' ? amount : unit === 'd' ? amount * 24 : amount * 24 * 7
    return naiveWall(naiveMillis(now) - hours * HOUR, now.nanos)
  }
  let result = { ...now }
  for (let step = 0; step < amount; step++) {
    if (unit === 'm') {
      const year = result.month === 1 ? result.year - 1 : result.year
      const month = result.month === 1 ? 12 : result.month - 1
      result = { ...result, year, month, day: Math.min(result.day, lastDayOfMonth(year, month)) }
    } else {
      const year = result.year - 1
      const day = result.month === 2 ? Math.min(result.day, lastDayOfMonth(year, 2)) : result.day
      result = { ...result, year, day }
    }
  }
  return result
}

/**
 * `-7d`, `7d`, `3m`, `1y` (the sign is ignored; numbers must be below 10,000),
 * anchored to "now" on the project's wall clock and read back in that zone.
 */
export function parseRelativeDate(text: string, timeZone: string, nowMillis: number): bigint | null {
  const match = RELATIVE_DATE.exec(text)
  if (!match) return null
  if (Number(match[1]) >= 10_000) return null
  const result = subtract(wallClockAt(timeZone, nowMillis), Number(match[1]), match[2])
  return wallClockToInstant(timeZone, result)
}
