import { expect } from 'chai'
import { keysEqual } from '../../../core/admin/key.ts'

function medianNs(run: () => void, rounds: number): number {
  const times: number[] = []
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint()
    run()
    times.push(Number(process.hrtime.bigint() - start))
  }
  return times.sort((a, b) => a - b)[Math.floor(rounds / 2)]!
}

describe('admin key comparison (keysEqual)', () => {
  it('is true only for the identical key, whatever the lengths', () => {
    expect(keysEqual('hra_secret-key-0123', 'hra_secret-key-0123')).to.equal(true)
    for (const other of [
      '',
      'h',
      'hra_secret-key-012',
      'hra_secret-key-01234',
      'HRA_secret-key-0123',
      'hra_secret-key-0123\u0000',
    ]) {
      expect(keysEqual(other, 'hra_secret-key-0123'), JSON.stringify(other)).to.equal(false)
    }
  })

  // What this can show: that the comparison has no early exit a 256 KiB key would make measurable.
  // It cannot prove constant time for 47-character keys over a network, where the difference of
  // an early-exit memcmp is nanoseconds under milliseconds of jitter; that rests on the code path
  // (SHA-256 of both sides, then timingSafeEqual; secret keys looked up by digest, see
  // test/core/projects.test.ts, which fails if a lookup by the key itself comes back).
  it('takes the same time whether the first or the last character differs (no early exit)', () => {
    // Long keys make an early-exit comparison visible: memcmp of 256 KiB takes microseconds, a
    // first-byte mismatch takes nothing. Hash-then-timingSafeEqual costs the same either way.
    const expected = 'k'.repeat(256 * 1024)
    const firstDiffers = `x${expected.slice(1)}`
    const lastDiffers = `${expected.slice(0, -1)}x`
    for (let i = 0; i < 20; i++) keysEqual(firstDiffers, expected), keysEqual(lastDiffers, expected)
    const first = medianNs(() => keysEqual(firstDiffers, expected), 150)
    const last = medianNs(() => keysEqual(lastDiffers, expected), 150)
    expect(first / last).to.be.within(0.6, 1.6)
  })
})
