/**
 * Per-project capture rate limit: a token bucket per project, refilled at `eventsPerSecond` up to
 * `burst`. A request passes while its project's bucket is above zero and then pays for all its
 * events, so a batch larger than the burst still goes through once and is paid back before the
 * next one. Refused requests answer 429 with Retry-After, which posthog-js and posthog-node honour.
 *
 * The buckets live in this process: with `server.workers` > 1 each HTTP process keeps its own, so
 * a project may send up to workers × the limit.
 */
import { httpError } from '../errors.ts'

export interface RateLimitConfig {
  readonly eventsPerSecond?: number
  readonly burst?: number
}

interface Bucket {
  tokens: number
  at: number
}

export class ProjectRateLimiter {
  private readonly buckets = new Map<number, Bucket>()
  private readonly burst: number

  constructor(
    private readonly rate: number,
    burst: number | undefined,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.burst = burst ?? Math.max(1, Math.ceil(rate * 10))
  }

  /** Takes `events` from the project's bucket; when it is empty, returns the seconds to wait instead. */
  take(projectId: number, events: number): number | undefined {
    const now = this.now()
    const bucket = this.buckets.get(projectId) ?? { tokens: this.burst, at: now }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rate)
    bucket.at = now
    this.buckets.set(projectId, bucket)
    if (bucket.tokens <= 0) return Math.max(1, Math.ceil((1 - bucket.tokens) / this.rate))
    bucket.tokens -= events
    return undefined
  }
}

export const rateLimited = (retryAfterSeconds: number) =>
  httpError('rate_limited', `this project sends events faster than its rate limit; retry in ${retryAfterSeconds} s`)

/** The limiter for a config, or undefined when no limit is set (the default). */
export function rateLimiterFor(config: RateLimitConfig | undefined): ProjectRateLimiter | undefined {
  return config?.eventsPerSecond === undefined
    ? undefined
    : new ProjectRateLimiter(config.eventsPerSecond, config.burst)
}
