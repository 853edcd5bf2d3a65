import { expect } from 'chai'
import v8 from 'node:v8'
import { arm, disarm, withDeadline, type Deadline } from '../../core/deadlines.ts'

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

  it('expires only the overdue runs, once each, even when an expiry disarms another overdue run', async () => {
    const expired: string[] = []
    const run = (name: string, onExpire?: () => void): Deadline => ({
      deadline: 0,
      previous: null,
      next: null,
      expire: () => {
        expired.push(name)
        onExpire?.()
      },
    })
    const second = run('second')
    const first = run('first', () => disarm(second))
    const later = run('later')
    arm(first, 20)
    arm(second, 20)
    arm(later, 10_000)
    arm(first, 20) // arming an armed run only moves its deadline
    await new Promise((resolve) => setTimeout(resolve, 120))
    expect(expired).to.deep.equal(['first'])
    expect(later.next, 'still armed').to.not.equal(null)
    disarm(later)
    disarm(later)
    expect([later.next, later.previous]).to.deep.equal([null, null])
  })

  it('leaves no garbage in the old generation when runs are armed and disarmed one at a time', () => {
    const run: Deadline = { deadline: 0, previous: null, next: null, expire: () => undefined }
    const oldSpace = () =>
      v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size
    const cycles = 200_000
    // what holds the armed runs lives long, as in a service: let scavenges promote it while one is armed
    const keeper: Deadline = { deadline: 0, previous: null, next: null, expire: () => undefined }
    arm(keeper, 60_000)
    let junk: number[] = []
    for (let i = 0; i < 2000; i++) junk = new Array(10_000).fill(i)
    expect(junk.length).to.equal(10_000)
    disarm(keeper)
    for (let i = 0; i < cycles; i++) arm(run, 60_000), disarm(run)
    const before = oldSpace()
    for (let i = 0; i < cycles; i++) arm(run, 60_000), disarm(run)
    // a Set holding the armed runs grew or shrank its table in the old generation at every cycle (~120 bytes)
    expect((oldSpace() - before) / cycles).to.be.below(8)
  })
})
