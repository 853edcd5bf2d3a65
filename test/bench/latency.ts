/**
 * Latencies of a target, in microseconds, in an HDR histogram (hdr-histogram-js, what autocannon
 * itself records with): fixed memory however many requests a slice has, three significant digits,
 * and slices add up by merging.
 */
import { build } from 'hdr-histogram-js'
import type { Histogram } from 'hdr-histogram-js'

export type { Histogram }

/** 1 µs to 60 s at three significant digits. */
export const latencyHistogram = (): Histogram =>
  build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 })

/** A histogram of latencies in µs as a load thread sends them back (each at least 1 µs, the histogram's floor). */
export function latencyHistogramOf(micros: Iterable<number> = []): Histogram {
  const histogram = latencyHistogram()
  for (const value of micros) histogram.recordValue(Math.max(1, Math.round(value)))
  return histogram
}

/** The latency at `percentile` (0..100) in milliseconds, to 0.1 ms; 0 when nothing was recorded. */
export const percentileMs = (histogram: Histogram, percentile: number): number =>
  histogram.totalCount ? Math.round(histogram.getValueAtPercentile(percentile) / 100) / 10 : 0
