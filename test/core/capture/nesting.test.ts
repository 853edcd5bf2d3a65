import { expect } from 'chai'
import { MAX_NESTING, nestsDeeperThan } from '../../../core/capture/nesting.ts'

describe('nestsDeeperThan', () => {
  const nested = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)

  it('counts objects and arrays opened inside each other', () => {
    expect(nestsDeeperThan(nested(3), 3)).to.equal(false)
    expect(nestsDeeperThan(nested(4), 3)).to.equal(true)
    expect(nestsDeeperThan('[[[]]]', 2)).to.equal(true)
    expect(nestsDeeperThan('[[],[],[]]', 2)).to.equal(false)
  })

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan('{"a":"[[[[{{{{\\"[[[["}', 1)).to.equal(false)
    expect(nestsDeeperThan('["\\\\",[[]]]', 2)).to.equal(true)
  })

  it('stops at the first level over the cap, whatever follows (a million-level payload)', () => {
    const started = performance.now()
    expect(nestsDeeperThan('['.repeat(1_000_000), MAX_NESTING)).to.equal(true)
    expect(performance.now() - started).to.be.lessThan(50)
  })
})
