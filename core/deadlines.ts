/**
 * Step timeouts without a timer per step. Each run registers its deadline in one set; a single
 * unref'd interval, alive only while something is registered, expires the overdue runs. Steps are
 * short and run for every event, so a timer plus a Promise.race per step cost more than most
 * steps themselves (seen in the capture benchmark's profiles).
 */
import { retryableError } from './plugin-api.ts'

/**
 * Something with a deadline: `expire` is called once the deadline has passed, unless disarmed first.
 * `previous` and `next` belong to this module (the list of armed runs); start them at null.
 */
export interface Deadline {
  deadline: number
  expire(): void
  previous: Deadline | null
  next: Deadline | null
}

/**
 * The armed runs, a circular list through the runs themselves, from this head. Not a Set: a Set
 * that lives long is in the old generation, and V8 makes each table it grows or shrinks into
 * there too, so arming and disarming a run at a time (a flags request's database read, a step)
 * left ~120 bytes of old-generation garbage per run, which brought full collections under load.
 */
const head: Deadline = { deadline: Number.POSITIVE_INFINITY, expire: () => undefined, previous: null, next: null }
head.previous = head.next = head
let armedCount = 0
let sweeper: NodeJS.Timeout | undefined
let sweepEveryMs = Number.POSITIVE_INFINITY

function sweep(): void {
  const now = performance.now()
  let overdue: Deadline[] | undefined
  for (let run = head.next!; run !== head; run = run.next!) if (run.deadline <= now) (overdue ??= []).push(run)
  // expired after the walk: an `expire` may arm or disarm other runs
  if (overdue)
    for (const run of overdue) {
      if (run.next === null) continue
      disarm(run)
      run.expire()
    }
  if (armedCount === 0) {
    clearInterval(sweeper)
    sweeper = undefined
    sweepEveryMs = Number.POSITIVE_INFINITY
  }
}

/**
 * Registers `run` to expire `ms` from now (checked every ms/4, at most every second, at least every
 * 5 ms). Arming an armed run moves its deadline.
 */
export function arm(run: Deadline, ms: number): void {
  run.deadline = performance.now() + ms
  if (run.next === null) {
    const last = head.previous!
    run.previous = last
    run.next = head
    last.next = run
    head.previous = run
    armedCount++
  }
  const every = Math.max(5, Math.min(1000, Math.floor(ms / 4)))
  if (every < sweepEveryMs) {
    clearInterval(sweeper)
    sweepEveryMs = every
    sweeper = setInterval(sweep, every).unref()
  }
}

/** The run finished in time (or expired): it leaves the armed runs. */
export function disarm(run: Deadline): void {
  if (run.next === null) return
  run.previous!.next = run.next
  run.next.previous = run.previous
  run.previous = run.next = null
  armedCount--
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
      previous: null,
      next: null,
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
