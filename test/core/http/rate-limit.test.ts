import { expect } from 'chai'
import { ProjectRateLimiter, rateLimiterFor } from '../../../core/http/rate-limit.ts'
import { startTestService } from '../../helpers/service.ts'

describe('ProjectRateLimiter', () => {
  it('lets a burst through, then asks to wait until the bucket refills', () => {
    let now = 0
    const limiter = new ProjectRateLimiter(10, 20, () => now)
    expect(limiter.take(1, 15)).to.equal(undefined)
    expect(limiter.take(1, 15)).to.equal(undefined) // 5 left: passes and goes to -10
    expect(limiter.take(1, 1)).to.equal(2) // (1 - -10) / 10 per second, rounded up
    now = 1_100
    expect(limiter.take(1, 1)).to.equal(undefined)
  })

  it('keeps one bucket per project', () => {
    const limiter = new ProjectRateLimiter(1, 1, () => 0)
    expect(limiter.take(1, 5)).to.equal(undefined)
    expect(limiter.take(1, 1)).to.be.a('number')
    expect(limiter.take(2, 1)).to.equal(undefined)
  })

  it('is off unless eventsPerSecond is configured', () => {
    expect(rateLimiterFor({})).to.equal(undefined)
    expect(rateLimiterFor({ eventsPerSecond: 5 })).to.be.instanceOf(ProjectRateLimiter)
  })
})

describe('capture rate limit (rateLimit config)', () => {
  it('answers 429 with Retry-After once a project is over its limit, and other projects still pass', async () => {
    const t = await startTestService({ rateLimit: { eventsPerSecond: 1, burst: 3 } })
    try {
      const other = (await (await t.admin('POST', '/api/projects', { name: 'other' })).json()) as { api_token: string }
      const send = (token: string) =>
        fetch(`${t.url}/batch/`, {
          method: 'POST',
          body: JSON.stringify({
            api_key: token,
            batch: [
              { event: 'e', distinct_id: 'd' },
              { event: 'e', distinct_id: 'd' },
            ],
          }),
        })
      expect((await send(t.project.api_token)).status).to.equal(200)
      expect((await send(t.project.api_token)).status).to.equal(200)
      const refused = await send(t.project.api_token)
      expect(refused.status).to.equal(429)
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 3)
      expect(await refused.json()).to.include({ code: 'rate_limited' })
      expect((await send(other.api_token)).status).to.equal(200)
    } finally {
      await t.close()
    }
  })

  it('limits nothing by default', async () => {
    const t = await startTestService()
    try {
      for (let i = 0; i < 30; i++) {
        const response = await fetch(`${t.url}/i/v0/e/`, {
          method: 'POST',
          body: JSON.stringify({ api_key: t.project.api_token, event: 'e', distinct_id: 'd' }),
        })
        expect(response.status).to.equal(200)
      }
    } finally {
      await t.close()
    }
  })
})
