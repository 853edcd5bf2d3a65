import { expect } from 'chai'
import { computeTimestamp, parseTimestamp } from '../../../core/capture/timestamp.ts'

const at = (iso: string) => new Date(iso)
const now = at('2023-01-01T12:00:00Z')
const iso = (date: Date) => date.toISOString()

describe('computeTimestamp', () => {
  describe('the capture.md §1.8 table, with now = 12:00:00Z', () => {
    it('corrects clock skew: timestamp 11:00:00Z sent at 12:00:10Z gives 10:59:50Z', () => {
      const result = computeTimestamp({ timestamp: '2023-01-01T11:00:00Z', sentAt: at('2023-01-01T12:00:10Z'), now })
      expect(iso(result)).to.equal('2023-01-01T10:59:50.000Z')
    })

    it('lets offset 5000 override any timestamp: 11:59:55Z', () => {
      const result = computeTimestamp({
        timestamp: '2023-01-01T11:00:00Z',
        sentAt: at('2023-01-01T12:00:10Z'),
        offset: 5000,
        now,
      })
      expect(iso(result)).to.equal('2023-01-01T11:59:55.000Z')
      expect(iso(computeTimestamp({ offset: 5000, now }))).to.equal('2023-01-01T11:59:55.000Z')
    })

    it('uses now when there is no timestamp, whatever sent_at says', () => {
      expect(iso(computeTimestamp({ sentAt: at('2023-01-01T12:00:05Z'), now }))).to.equal('2023-01-01T12:00:00.000Z')
    })

    it('skips the correction when $ignore_sent_at is true: 11:00:00Z', () => {
      const result = computeTimestamp({
        timestamp: '2023-01-01T11:00:00Z',
        sentAt: at('2023-01-01T12:00:10Z'),
        ignoreSentAt: true,
        now,
      })
      expect(iso(result)).to.equal('2023-01-01T11:00:00.000Z')
    })
  })

  it('corrects a client clock that runs behind', () => {
    const result = computeTimestamp({ timestamp: '2023-01-01T11:00:00Z', sentAt: at('2023-01-01T11:59:50Z'), now })
    expect(iso(result)).to.equal('2023-01-01T11:00:10.000Z')
  })

  it('applies the correction exactly, to the millisecond', () => {
    const result = computeTimestamp({
      timestamp: '2023-01-01T11:00:00.123Z',
      sentAt: at('2023-01-01T12:00:00.456Z'),
      now,
    })
    expect(iso(result)).to.equal('2023-01-01T10:59:59.667Z')
  })

  it('keeps the timestamp as sent when there is no sent_at', () => {
    expect(iso(computeTimestamp({ timestamp: '2023-01-01T11:00:00+02:00', now }))).to.equal('2023-01-01T09:00:00.000Z')
  })

  it('uses now for a timestamp that does not parse, even with sent_at', () => {
    expect(iso(computeTimestamp({ timestamp: 'not a date', sentAt: at('2023-01-01T12:00:10Z'), now }))).to.equal(
      iso(now),
    )
  })

  it('reads a numeric timestamp as its decimal text: epoch seconds or milliseconds', () => {
    expect(iso(computeTimestamp({ timestamp: 1672570800, now }))).to.equal('2023-01-01T11:00:00.000Z')
    expect(iso(computeTimestamp({ timestamp: 1672570800000, now }))).to.equal('2023-01-01T11:00:00.000Z')
  })

  it('ignores an offset that is not a number, and truncates a fractional one', () => {
    expect(iso(computeTimestamp({ timestamp: '2023-01-01T11:00:00Z', offset: '5000', now }))).to.equal(
      '2023-01-01T11:00:00.000Z',
    )
    expect(iso(computeTimestamp({ offset: 1500.9, now }))).to.equal('2023-01-01T11:59:58.500Z')
  })

  it('keeps a time up to 23 hours ahead and clamps anything further to now', () => {
    expect(iso(computeTimestamp({ timestamp: '2023-01-02T11:00:00Z', now }))).to.equal('2023-01-02T11:00:00.000Z')
    expect(iso(computeTimestamp({ timestamp: '2023-01-02T11:00:00.001Z', now }))).to.equal(iso(now))
    expect(iso(computeTimestamp({ offset: -24 * 3600 * 1000, now }))).to.equal(iso(now))
  })

  it('clamps a time pushed into the far future by the skew correction', () => {
    const result = computeTimestamp({ timestamp: '2023-01-01T11:00:00Z', sentAt: at('2022-12-30T12:00:00Z'), now })
    expect(iso(result)).to.equal(iso(now))
  })

  it('falls back to the Unix epoch for a year below 0', () => {
    const result = computeTimestamp({ timestamp: '0000-01-01T00:00:00Z', sentAt: at('2023-01-01T12:00:01Z'), now })
    expect(iso(result)).to.equal('1970-01-01T00:00:00.000Z')
    expect(iso(computeTimestamp({ offset: now.getTime() + 1e14, now }))).to.equal('1970-01-01T00:00:00.000Z')
    expect(iso(computeTimestamp({ offset: 1e300, now }))).to.equal('1970-01-01T00:00:00.000Z')
  })

  it('keeps year 0 and year 9999', () => {
    expect(computeTimestamp({ timestamp: '0000-01-01T00:00:00Z', now }).getUTCFullYear()).to.equal(0)
    const late = computeTimestamp({ timestamp: '9999-12-31T23:59:59Z', now: at('9999-12-31T23:00:00Z') })
    expect(iso(late)).to.equal('9999-12-31T23:59:59.000Z')
  })
})

describe('parseTimestamp', () => {
  it('parses what posthog-node, posthog-js and posthog-python send', () => {
    expect(iso(parseTimestamp('2026-11-22T15:49:19.770Z')!)).to.equal('2026-11-22T15:49:19.770Z')
    expect(iso(parseTimestamp('2026-11-22T15:52:23.592927+00:00')!)).to.equal('2026-11-22T15:52:23.592Z')
  })

  it('returns undefined for text that is no date', () => {
    expect(parseTimestamp('')).to.equal(undefined)
    expect(parseTimestamp('soon')).to.equal(undefined)
  })
})
