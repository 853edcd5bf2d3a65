import { expect } from 'chai'
import { count, counterValue, renderMetrics } from '../../core/metrics.ts'

describe('metrics counters', () => {
  it('counts a frozen labels object, passed again and again, in the same series as equal plain labels', () => {
    const name = 'hedgerow_test_frozen_labels_total'
    const ok = Object.freeze({ status: '200' })
    count(name, ok)
    count(name, ok)
    count(name, { status: '200' })
    count(name, Object.freeze({ status: '404' }))
    expect(counterValue(name, { status: '200' })).to.equal(3)
    expect(counterValue(name, ok)).to.equal(3)
    expect(counterValue(name, { status: '404' })).to.equal(1)
    expect(renderMetrics()).to.include(`${name}{status="200"} 3`).and.include(`${name}{status="404"} 1`)
  })
})
