import { expect } from 'chai'
import { withDeadline } from '../../core/deadlines.ts'

const never = () => new Promise<never>(() => undefined)
const settle = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (error: Error & { retryable?: boolean }) => ({ error }),
  )

describe('deadlines', () => {
  it('passes through the value or the error of work that finishes in time', async () => {
    expect(await withDeadline(Promise.resolve(42), 1000, 'x')).to.equal(42)
    const failed = await settle(withDeadline(Promise.reject(new Error('boom')), 1000, 'x'))
    expect((failed as { error: Error }).error.message).to.equal('boom')
  })

  it('rejects work that runs past its deadline with a retryable error naming it', async () => {
    const started = performance.now()
    const result = (await settle(withDeadline(never(), 40, 'plugin-x in geoip'))) as {
      error: Error & { retryable?: boolean }
    }
    const elapsed = performance.now() - started
    expect(result.error.message).to.equal('plugin-x in geoip timed out after 40 ms')
    expect(result.error.retryable).to.equal(true)
    expect(elapsed).to.be.within(35, 200)
  })

  it('honours a short deadline registered after a long one, and leaves the long one running', async () => {
    const long = settle(
      withDeadline(new Promise((resolve) => setTimeout(() => resolve('late but in time'), 150)), 10_000, 'long'),
    )
    const short = await settle(withDeadline(never(), 30, 'short'))
    expect((short as { error: Error }).error.message).to.match(/short timed out/)
    expect(await long).to.deep.equal({ value: 'late but in time' })
  })
})
