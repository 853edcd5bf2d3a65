/**
 * The flags requests read in one turn of the event loop, evaluated together at its end, one after
 * another, before any of them is answered.
 *
 * With persons and groups cached a request has nothing to wait for between parsing and evaluation,
 * and running each from parsing to response on its own cost more CPU per request under load than
 * evaluating the requests of a turn in a run: the evaluator's code and the definitions stay in the
 * processor's caches from one request to the next, where building and writing each answer in
 * between (12 KB through the kernel for 50 flags) pushed them out. A request waits for the others of
 * its turn only; a request whose evaluation pauses (its slices, evaluate.ts) goes on in later turns.
 */
export class EvaluationTurns {
  private waiting: Array<() => void> = []

  /** `evaluate()` at the end of this turn, after the evaluations queued before it. */
  run<T>(evaluate: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(this.drain)
      this.waiting.push(() => {
        try {
          evaluate().then(resolve, reject)
        } catch (error) {
          reject(error)
        }
      })
    })
  }

  /** Starts every waiting evaluation; what each resolves to is handled after all have run (microtasks). */
  private readonly drain = (): void => {
    const waiting = this.waiting
    this.waiting = []
    for (const start of waiting) start()
  }
}
