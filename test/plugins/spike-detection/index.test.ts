import { expect } from 'chai'
import { markSpike, OVERFLOW_PROPERTY } from '../../../plugins/spike-detection/index.ts'
import { SpikeDetector } from '../../../plugins/spike-detection/detector.ts'
import { count, counterValue } from '../../../core/metrics.ts'
import type { EventContext, IngestEvent } from '../../../core/plugin-api.ts'
import { sampleContext } from '../../helpers/hooks.ts'

const event = (distinctId: string, over: Partial<IngestEvent> = {}): IngestEvent => ({
  uuid: '',
  event: 'e',
  distinctId,
  properties: { a: 1 },
  timestamp: new Date(0),
  ...over,
})

function context(
  over: Partial<EventContext> = {},
): EventContext & { warnings: Array<{ type: string; details?: Record<string, unknown> }> } {
  const warnings: Array<{ type: string; details?: Record<string, unknown> }> = []
  return {
    ...sampleContext(),
    project: { ...sampleContext().project, id: 9001 },
    warn: (type, details) => void warnings.push({ type, details }),
    ...over,
    warnings,
  }
}

/** The service's registry, as `PluginApi.metrics` hands it out. */
const metrics = { count }

describe('spike-detection step', () => {
  it('marks events over the rate with $overflow, keeps their properties, counts them and warns once', () => {
    const detector = new SpikeDetector({ windowMs: 1000, maxEventsPerWindow: 2, maxKeys: 10 })
    const ctx = context()
    const before = counterValue('hedgerow_events_overflow_total', { project: '9001' })
    const results = [0, 1, 2, 3].map((t) => markSpike(detector, event('hot'), ctx, t, 1, metrics))
    expect(results.slice(0, 2)).to.deep.equal([undefined, undefined])
    expect(results[2]?.properties).to.deep.equal({ a: 1, [OVERFLOW_PROPERTY]: true })
    expect(results[3]?.properties[OVERFLOW_PROPERTY]).to.equal(true)
    expect(counterValue('hedgerow_events_overflow_total', { project: '9001' }) - before).to.equal(2)
    expect(ctx.warnings).to.have.length(1)
    expect(ctx.warnings[0]).to.deep.include({ type: 'event_overflow' })
    expect(ctx.warnings[0].details).to.include({ distinct_id: 'hot', window_seconds: 1 })
  })

  it('never counts historical migration events', () => {
    const detector = new SpikeDetector({ windowMs: 1000, maxEventsPerWindow: 1, maxKeys: 10 })
    for (let t = 0; t < 5; t++) {
      expect(markSpike(detector, event('bulk'), context({ historicalMigration: true }), t, 1, metrics)).to.equal(
        undefined,
      )
      expect(markSpike(detector, event('bulk', { historicalMigration: true }), context(), t, 1, metrics)).to.equal(
        undefined,
      )
    }
    expect(detector.size).to.equal(0)
  })

  it('keys by project and distinct_id', () => {
    const detector = new SpikeDetector({ windowMs: 1000, maxEventsPerWindow: 1, maxKeys: 10 })
    markSpike(detector, event('same'), context(), 0, 1, metrics)
    const otherProject = context({ project: { ...sampleContext().project, id: 2 } })
    expect(markSpike(detector, event('same'), otherProject, 1, 1, metrics)).to.equal(undefined)
    expect(markSpike(detector, event('same'), context(), 2, 1, metrics)?.properties[OVERFLOW_PROPERTY]).to.equal(true)
  })
})
