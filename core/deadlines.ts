/**
 * Step timeouts without a timer per step. Each run registers its deadline in one set; a single
 * unref'd interval, alive only while something is registered, expires the overdue runs. Steps are
 * short and run for every event, so a timer plus a Promise.race per step cost more than most
 * steps themselves (seen in the capture benchmark's profiles).
 */
import { retryableError } from './plugin-api.ts'

/** Something with a deadline: `expire` is called once the deadline has passed, unless disarmed first. */
export interface Deadline {
  deadline: number
  expire(): void
}

const pending = new Set<Deadline>()
let sweeper: NodeJS.Timeout | undefined
let sweepEveryMs = Infinity

function sweep(): void {
  const now = performance.now()
  for (const run of pending) {
    if (run.deadline > now) continue
    pending.delete(run)
    run.expire()
  }
  if (pending.size === 0) {
    clearInterval(sweeper)
    sweeper = undefined
    sweepEveryMs = Infinity
  }
}

/**
 * Registers `run` to expire `ms` from now (checked every ms/4, at most every second, at least every
 * 5 ms). Arming an armed run moves its deadline.
 */
export function arm(run: Deadline, ms: number): void {
  run.deadline = performance.now() + ms
  pending.add(run)
  const every = Math.max(5, Math.min(1000, Math.floor(ms / 4)))
  if (every < sweepEveryMs) {
    clearInterval(sweeper)
    sweepEveryMs = every
    sweeper = setInterval(sweep, every).unref()
  }
}

/** The run finished in time. */
export function disarm(run: Deadline): void {
  pending.delete(run)
}

/** The error a step or read that ran out of time fails with: retryable, since a retry may be faster. */
export function timeoutError(what: string, ms: number): Error {
  return retryableError(`${what} timed out after ${ms} ms`)
}

/**
 * `work`, or a rejection once `ms` have passed: by default a retryable error naming `what`, or the
 * error `makeError` makes.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string, makeError?: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const run: Deadline = {
      deadline: 0,
      expire: () => reject(makeError ? makeError() : timeoutError(what, ms)),
    }
    arm(run, ms)
    work.then(
      (value) => {
        disarm(run)
        resolve(value)
      },
      (error: unknown) => {
        disarm(run)
        reject(error)
      },
    )
  })
}
