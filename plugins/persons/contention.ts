/**
 * Optimistic concurrency for person writes: a write checks the version it read, a loser re-reads
 * and tries again a bounded number of times, and then gives up with a retryable error (503, and
 * the SDK sends the request again).
 */

/** Bounded optimistic retries; each one re-reads what a concurrent writer changed. */
export const MAX_ATTEMPTS = 16

/** Thrown when optimistic retries run out; retryable, so the client gets a 503 and sends again. */
export class PersonContentionError extends Error {
  readonly retryable = true
  constructor(what: string) {
    super(`${what}: too many concurrent changes to one person; retry`)
    this.name = 'PersonContentionError'
  }
}

/** A short random pause after losing an optimistic race, so contenders spread out instead of colliding again. */
export function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 4 * Math.min(attempt + 1, 8)))
}
