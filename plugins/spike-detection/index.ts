/**
 * spike-detection: counts real-time events per project and distinct_id over a sliding window. Above
 * the configured rate the extra events are still processed and stored, but carry
 * `properties.$overflow = true`; each is counted in `hedgerow_events_overflow_total`, and one
 * `event_overflow` ingestion warning is recorded per key and window (capture.md §1.13: PostHog
 * reroutes such keys to an overflow topic and processes them anyway).
 *
 * It taps the `validate` hook, after the validate plugin's own tap: events validate drops are not
 * counted, the distinct_id and the historical mark are final, and later steps (persons, sinks) see
 * the mark. Historical-migration requests never count (design.md §1).
 */
import { Type } from 'typebox'
import { API_VERSION, Stage, definePlugin } from '../../core/plugin-api.ts'
import type { EventContext, IngestEvent, Metrics } from '../../core/plugin-api.ts'
import { SpikeDetector } from './detector.ts'

export const OVERFLOW_PROPERTY = '$overflow'

export const optionsSchema = Type.Object(
  {
    windowSeconds: Type.Number({ exclusiveMinimum: 0, default: 60 }),
    /** Events one distinct_id of one project may send per window before the extra ones are marked. */
    maxEventsPerWindow: Type.Integer({ minimum: 1, default: 1000 }),
    /** distinct_ids remembered at once (about 100 bytes each); the least recently seen are forgotten. */
    maxKeys: Type.Integer({ minimum: 1, default: 100_000 }),
  },
  { additionalProperties: false },
)

export function markSpike(
  detector: SpikeDetector,
  event: IngestEvent,
  ctx: EventContext,
  now: number,
  windowSeconds: number,
  metrics: Metrics,
): IngestEvent | undefined {
  if (ctx.historicalMigration || event.historicalMigration) return undefined
  const verdict = detector.record(ctx.project.id, event.distinctId, now)
  if (!verdict.overflow) return undefined
  metrics.count('hedgerow_events_overflow_total', { project: String(ctx.project.id) })
  if (verdict.warn)
    ctx.warn('event_overflow', {
      distinct_id: event.distinctId,
      events_in_window: verdict.rate,
      window_seconds: windowSeconds,
    })
  return { ...event, properties: { ...event.properties, [OVERFLOW_PROPERTY]: true } }
}

export default definePlugin({
  name: 'spike-detection',
  apiVersion: API_VERSION,
  optionsSchema,
  setup(api, options) {
    const detector = new SpikeDetector({
      windowMs: options.windowSeconds * 1000,
      maxEventsPerWindow: options.maxEventsPerWindow,
      maxKeys: options.maxKeys,
    })
    // synchronous work: a sync tap costs the step chain no promise and no microtask per event
    api.hooks.validate.tap({ name: api.id, stage: Stage.afterStep }, function detectSpike(event, ctx) {
      return markSpike(detector, event, ctx, Date.now(), options.windowSeconds, api.metrics)
    })
  },
})
