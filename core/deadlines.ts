/**
 * Step timeouts without a timer per step. Each run registers its deadline in one set; a single
 * unref'd interval, alive only while something is registered, rejects the overdue runs. Steps are
 * short and run for every event, so a timer plus a Promise.race per step cost more than most
 * steps themselves (seen in the capture benchmark's profiles).
 */
interface Pending {
  readonly deadline: number
  readonly timeoutError: () => Error
  readonly reject: (error: Error) => void
}

const pending = new Set<Pending>()
let sweeper: NodeJS.Timeout | undefined
let sweepEveryMs = Infinity

function sweep(): void {
  const now = performance.now()
  for (const run of pending) {
    if (run.deadline > now) continue
    pending.delete(run)
    run.reject(run.timeoutError())
  }
  if (pending.size === 0) {
    clearInterval(sweeper)
    sweeper = undefined
    sweepEveryMs = Infinity
  }
}

/**
 * `work`, or a rejection once `ms` have passed (checked every ms/4, at most every second): by
 * default a retryable error naming `what`, or the error `timeoutError` makes.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string, timeoutError?: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const made = timeoutError ?? (() => Object.assign(new Error(`${what} timed out after ${ms} ms`), { retryable: true }))
    const run: Pending = { deadline: performance.now() + ms, timeoutError: made, reject }
    pending.add(run)
    const every = Math.max(5, Math.min(1000, Math.floor(ms / 4)))
    if (every < sweepEveryMs) {
      clearInterval(sweeper)
      sweepEveryMs = every
      sweeper = setInterval(sweep, every).unref()
    }
    work.then(
      (value) => {
        pending.delete(run)
        resolve(value)
      },
      (error: unknown) => {
        pending.delete(run)
        reject(error)
      },
    )
  })
}
