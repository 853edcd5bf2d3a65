import { expect } from 'chai'
import { SpikeDetector } from '../../../plugins/spike-detection/detector.ts'

const detector = (maxEventsPerWindow = 3, maxKeys = 100) =>
  new SpikeDetector({ windowMs: 1000, maxEventsPerWindow, maxKeys })

describe('SpikeDetector', () => {
  it('lets the allowed number of events through and marks the rest of the window', () => {
    const d = detector()
    const verdicts = [0, 10, 20, 30, 40].map((t) => d.record(1, 'k', t).overflow)
    expect(verdicts).to.deep.equal([false, false, false, true, true])
  })

  it('warns once per key per window, on the first overflow', () => {
    const d = detector(1)
    expect([0, 1, 2, 3].map((t) => d.record(1, 'k', t).warn)).to.deep.equal([false, true, false, false])
    expect(d.record(1, 'k', 1001).warn).to.equal(true)
  })

  it('counts keys independently', () => {
    const d = detector(1)
    d.record(1, 'a', 0)
    expect(d.record(1, 'a', 1).overflow).to.equal(true)
    expect(d.record(1, 'b', 2).overflow).to.equal(false)
  })

  it('slides: the previous window weighs in by how much of it still overlaps', () => {
    const d = detector(4)
    for (const t of [900, 910, 920, 930]) d.record(1, 'k', t)
    // at 1250, 75% of the previous window overlaps: 4 × 0.75 = 3 events, so one more fits
    expect(d.record(1, 'k', 1250).overflow).to.equal(false)
    expect(d.record(1, 'k', 1250).overflow).to.equal(true)
    // two windows later nothing of the burst is left
    expect(d.record(1, 'k', 3000).overflow).to.equal(false)
  })

  it('forgets the least recently seen key when full, so memory stays bounded', () => {
    const d = detector(1, 2)
    d.record(1, 'a', 0)
    d.record(1, 'b', 0)
    d.record(1, 'a', 1)
    d.record(1, 'c', 2)
    expect(d.size).to.equal(2)
    expect(d.record(1, 'a', 3).overflow).to.equal(true)
    expect(d.record(1, 'b', 4).overflow).to.equal(false)
  })

  it('stays bounded under a flood of distinct keys', () => {
    const d = detector(1, 1000)
    for (let i = 0; i < 50_000; i++) d.record(1, `key-${i}`, i)
    expect(d.size).to.equal(1000)
  })

  it('forgets keys in least-recently-seen order across projects, as a map re-inserted on every event would', () => {
    const random = seededRandom(7)
    const d = detector(3, 20)
    const reference = new Map<string, number>()
    for (let t = 0; t < 5_000; t++) {
      const project = 1 + Math.floor(random() * 3)
      const id = `id-${Math.floor(random() * 30)}`
      const key = `${project}/${id}`
      const seen = reference.get(key) ?? 0
      reference.delete(key)
      while (reference.size >= 20) reference.delete(reference.keys().next().value as string)
      reference.set(key, seen + 1)
      // all 5,000 events fall in window 0 (times 0-999), so a remembered key overflows from its 4th event on
      expect(d.record(project, id, Math.floor(t / 5)).overflow).to.equal(seen >= 3)
      expect(d.size).to.equal(reference.size)
    }
  })
})

/** A repeatable sequence in [0, 1) (linear congruential). */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32
}
