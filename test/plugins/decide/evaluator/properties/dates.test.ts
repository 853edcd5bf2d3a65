import { expect } from 'chai'
import { matches } from './helpers.ts'
import { parseDateInZone, propertyDate } from '../../../../../plugins/decide/evaluator/properties/dates.ts'

const iso = (instant: bigint | null) => (instant === null ? null : new Date(Number(instant / 1_000_000n)).toISOString())
const at = (text: string) => Date.parse(text)

describe('property operators: is_date_before, is_date_after, is_date_exact (flags.md §8 date rules)', () => {
  describe('relative filter values', () => {
    const now = at('2024-06-15T12:00:00Z')
    it('subtracts hours, days and weeks from now', () => {
      expect(matches('is_date_after', '-7d', { key: '2024-06-09T12:00:00Z' }, { now })).to.equal(true)
      expect(matches('is_date_after', '-7d', { key: '2024-06-07T12:00:00Z' }, { now })).to.equal(false)
      expect(matches('is_date_before', '-2w', { key: '2024-05-31T11:59:59Z' }, { now })).to.equal(true)
      expect(iso(parseDateInZone('-3h', 'UTC', now))).to.equal('2024-06-15T09:00:00.000Z')
    })

    it('follows now from request to request, and the zone, with the same filter', () => {
      const yesterday = { key: '2024-06-14T13:00:00Z' }
      expect(matches('is_date_after', '-1d', yesterday, { now })).to.equal(true)
      expect(matches('is_date_after', '-1d', yesterday, { now: now + 7_200_000 })).to.equal(false)
      expect(matches('is_date_after', '-1d', yesterday, { now })).to.equal(true)
      const evening = { key: '2024-06-15T20:00:00Z' }
      expect(matches('is_date_before', '2024-06-16', evening, { timeZone: 'UTC' })).to.equal(true)
      expect(matches('is_date_before', '2024-06-16', evening, { timeZone: 'Asia/Tokyo' })).to.equal(false)
      expect(matches('is_date_before', '2024-06-16', evening, { timeZone: 'UTC' })).to.equal(true)
    })

    it('ignores the sign', () => {
      expect(parseDateInZone('7d', 'UTC', now)).to.equal(parseDateInZone('-7d', 'UTC', now))
    })

    it('steps months one at a time, clamping the day at each step', () => {
      const endOfMarch = at('2024-03-31T08:00:00Z')
      expect(iso(parseDateInZone('-1m', 'UTC', endOfMarch))).to.equal('2024-02-29T08:00:00.000Z')
      expect(iso(parseDateInZone('-2m', 'UTC', endOfMarch))).to.equal('2024-01-29T08:00:00.000Z')
    })

    it('clamps 29 February when going back a year', () => {
      expect(iso(parseDateInZone('-1y', 'UTC', at('2024-02-29T00:00:00Z')))).to.equal('2023-02-28T00:00:00.000Z')
      expect(iso(parseDateInZone('-4y', 'UTC', at('2024-02-29T00:00:00Z')))).to.equal('2020-02-28T00:00:00.000Z')
    })

    it('anchors "now" on the project clock', () => {
      // 03:00Z on 1 March is 19:00 on 29 February in Los Angeles; a month earlier is 29 January there.
      const now = at('2024-03-01T03:00:00Z')
      expect(iso(parseDateInZone('-1m', 'America/Los_Angeles', now))).to.equal('2024-01-30T03:00:00.000Z')
      expect(iso(parseDateInZone('-1m', 'UTC', now))).to.equal('2024-02-01T03:00:00.000Z')
    })

    it('rejects numbers of 10,000 or more and other units', () => {
      expect(parseDateInZone('10000d', 'UTC', now)).to.equal(null)
      expect(parseDateInZone('9999d', 'UTC', now)).to.not.equal(null)
      expect(parseDateInZone('3x', 'UTC', now)).to.equal(null)
      expect(parseDateInZone('1.5d', 'UTC', now)).to.equal(null)
    })
  })

  describe('absolute filter values', () => {
    it('honours an explicit RFC 3339 offset', () => {
      expect(iso(parseDateInZone('2024-06-01T10:00:00+02:00', 'America/New_York', 0))).to.equal(
        '2024-06-01T08:00:00.000Z',
      )
      expect(iso(parseDateInZone('2024-06-01T10:00:00.5Z', 'Asia/Tokyo', 0))).to.equal('2024-06-01T10:00:00.500Z')
    })

    it('reads a bare date as midnight in the project zone', () => {
      expect(iso(parseDateInZone('2024-06-01', 'America/New_York', 0))).to.equal('2024-06-01T04:00:00.000Z')
      expect(iso(parseDateInZone('2024-06-01', 'UTC', 0))).to.equal('2024-06-01T00:00:00.000Z')
      const value = { key: '2024-06-01T03:30:00Z' }
      expect(matches('is_date_before', '2024-06-01', value, { timeZone: 'America/New_York' })).to.equal(true)
      expect(matches('is_date_before', '2024-06-01', value, { timeZone: 'UTC' })).to.equal(false)
    })

    it('reads naive date-times in the project zone', () => {
      expect(iso(parseDateInZone('2024-06-01 10:30', 'Europe/Paris', 0))).to.equal('2024-06-01T08:30:00.000Z')
      expect(iso(parseDateInZone('2024-06-01T10:30:15.25', 'Europe/Paris', 0))).to.equal('2024-06-01T08:30:15.250Z')
    })

    it('takes the earlier instant in a DST overlap and finds none in a DST gap', () => {
      expect(iso(parseDateInZone('2024-11-03 01:30:00', 'America/New_York', 0))).to.equal('2024-11-03T05:30:00.000Z')
      expect(parseDateInZone('2024-03-10 02:30:00', 'America/New_York', 0)).to.equal(null)
    })

    it('falls back to common formats read as UTC', () => {
      expect(iso(parseDateInZone('Wed, 02 Jun 2021 06:31:39 GMT', 'Asia/Tokyo', 0))).to.equal(
        '2021-06-02T06:31:39.000Z',
      )
      expect(iso(parseDateInZone('May 25, 2021', 'Asia/Tokyo', 0))).to.equal('2021-05-25T00:00:00.000Z')
      expect(iso(parseDateInZone('2017-11-25 13:31:15 PST', 'UTC', 0))).to.equal('2017-11-25T21:31:15.000Z')
      expect(iso(parseDateInZone('1511648546', 'UTC', 0))).to.equal('2017-11-25T22:22:26.000Z')
    })

    it('rejects impossible dates and nonsense', () => {
      expect(parseDateInZone('2024-02-30', 'UTC', 0)).to.equal(null)
      expect(parseDateInZone('not a date', 'UTC', 0)).to.equal(null)
      expect(matches('is_date_after', 'not a date', { key: '2024-01-01' })).to.equal(false)
    })
  })

  describe('property values', () => {
    it('reads numbers and numeric text as Unix seconds, not milliseconds', () => {
      expect(iso(propertyDate(1717200000, 'UTC', 0))).to.equal('2024-06-01T00:00:00.000Z')
      expect(iso(propertyDate('1717200000', 'UTC', 0))).to.equal('2024-06-01T00:00:00.000Z')
      expect(propertyDate(1717200000.25, 'UTC', 0)).to.equal(1717200000250000000n)
      expect(matches('is_date_exact', '2024-06-01T00:00:00Z', { key: 1717200000 })).to.equal(true)
      expect(matches('is_date_after', '2024-01-01', { key: 1717200000000 })).to.equal(true)
    })

    it('reads date text like a filter value, in the project zone', () => {
      expect(
        matches('is_date_exact', '2024-06-01T04:00:00Z', { key: '2024-06-01' }, { timeZone: 'America/New_York' }),
      ).to.equal(true)
    })

    it('compares strictly, at nanosecond precision', () => {
      expect(matches('is_date_before', '2024-06-01T00:00:00Z', { key: '2024-06-01T00:00:00Z' })).to.equal(false)
      expect(matches('is_date_after', '2024-06-01T00:00:00Z', { key: '2024-06-01T00:00:00.000000001Z' })).to.equal(true)
      expect(matches('is_date_exact', '2024-06-01T00:00:00.000000001Z', { key: '2024-06-01T00:00:00Z' })).to.equal(
        false,
      )
    })

    it('does not match absent keys, unreadable values or non-text filter values', () => {
      expect(matches('is_date_before', '2024-06-01', {})).to.equal(false)
      expect(matches('is_date_before', '2024-06-01', { key: true })).to.equal(false)
      expect(matches('is_date_before', '2024-06-01', { key: 'soon' })).to.equal(false)
      expect(matches('is_date_before', 1717200000, { key: 1 })).to.equal(false)
    })
  })
})
