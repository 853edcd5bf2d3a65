/**
 * Shutdown within a budget. Each phase (draining requests, plugin teardowns, closing the
 * database) can wait on something that never answers: a database that has stopped responding
 * leaves the driver's close, or the embedded server's, pending for good. The phases run in order
 * under one timer; when it fires, shutdown fails with an error naming the phase still pending, and
 * `npm start` logs it and exits 1 instead of hanging until the orchestrator's SIGKILL.
 */

export class ShutdownTimeoutError extends Error {
  constructor(
    readonly budgetMs: number,
    readonly pending: string,
    budgetName = 'server.shutdownTimeoutMs',
  ) {
    super(`shutdown did not finish within ${budgetMs} ms (${budgetName}): ${pending} was still pending`)
    this.name = 'ShutdownTimeoutError'
  }
}

/** One step of a shutdown: what it does (for the error), and the work. */
export type ShutdownPhase = readonly [what: string, run: () => unknown]

/**
 * Runs `phases` one after another; rejects with a ShutdownTimeoutError if they have not all
 * finished `budgetMs` after the call. The timer is not unref'd: it must fire even when the only
 * thing left in the event loop is the wait it is there to end.
 */
export async function shutDownWithin(
  budgetMs: number,
  phases: readonly ShutdownPhase[],
  budgetName?: string,
): Promise<void> {
  let pending = phases[0]?.[0] ?? 'nothing'
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ShutdownTimeoutError(budgetMs, pending, budgetName)), budgetMs)
  })
  const run = async (): Promise<void> => {
    for (const [what, work] of phases) {
      pending = what
      await work()
    }
  }
  try {
    await Promise.race([run(), timedOut])
  } finally {
    clearTimeout(timer)
  }
}
