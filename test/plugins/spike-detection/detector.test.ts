import { expect } from 'chai'
import { SpikeDetector } from '../../../plugins/spike-detection/detector.ts'

const detector = (maxEventsPerWindow = 3, maxKeys = 100) => new SpikeDetector({ windowMs: 1000, maxEventsPerWindow, maxKeys })

describe('SpikeDetector', () => {
  it('lets the allowed number of events through and marks the rest of the window', () => {
    const d = detector()
    const verdicts = [0, 10, 20, 30, 40].map((t) => d.record('k', t).overflow)
    expect(verdicts).to.deep.equal([false, false, false, true, true])
  })

  it('warns once per key per window, on the first overflow', () => {
    const d = detector(1)
    expect([0, 1, 2, 3].map((t) => d.record('k', t).warn)).to.deep.equal([false, true, false, false])
    expect(d.record('k', 1001).warn).to.equal(true)
  })

  it('counts keys independently', () => {
    const d = detector(1)
    d.record('a', 0)
    expect(d.record('a', 1).overflow).to.equal(true)
    expect(d.record('b', 2).overflow).to.equal(false)
  })

  it('slides: the previous window weighs in by how much of it still overlaps', () => {
    const d = detector(4)
    for (const t of [900, 910, 920, 930]) d.record('k', t)
    // at 1250, 75% of the previous window overlaps: 4 × 0.75 = 3 events, so one more fits
    expect(d.record('k', 1250).overflow).to.equal(false)
    expect(d.record('k', 1250).overflow).to.equal(true)
    // two windows later nothing of the burst is left
    expect(d.record('k', 3000).overflow).to.equal(false)
  })

  it('forgets the least recently seen key when full, so memory stays bounded', () => {
    const d = detector(1, 2)
    d.record('a', 0)
    d.record('b', 0)
    d.record('a', 1)
    d.record('c', 2)
    expect(d.size).to.equal(2)
    expect(d.record('a', 3).overflow).to.equal(true)
    expect(d.record('b', 4).overflow).to.equal(false)
  })

  it('stays bounded under a flood of distinct keys', () => {
    const d = detector(1, 1000)
    for (let i = 0; i < 50_000; i++) d.record(`key-${i}`, i)
    expect(d.size).to.equal(1000)
  })
})
