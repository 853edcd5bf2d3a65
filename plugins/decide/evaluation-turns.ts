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
 * A burst is evaluated a slice at a time: once `sliceMs` have passed, the requests not yet started
 * wait for the next turn (first, before later arrivals), and the answers made so far go out.
 */
export interface TurnSlices {
  sliceMs: number
  /** Monotonic milliseconds. */
  clock: () => number
}

export class EvaluationTurns {
  private waiting: Array<() => void> = []
  private scheduled = false

  constructor(private readonly slices: TurnSlices) {}

  /** `evaluate()` at the end of this turn, after the evaluations queued before it. */
  run<T>(evaluate: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push(() => {
        try {
          evaluate().then(resolve, reject)
        } catch (error) {
          reject(error)
        }
      })
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(this.drain)
      }
    })
  }

  /** Starts the waiting evaluations in order for one slice; what each resolves to is handled after (microtasks). */
  private readonly drain = (): void => {
    const { clock, sliceMs } = this.slices
    const waiting = this.waiting
    const started = clock()
    let next = 0
    while (next < waiting.length) {
      waiting[next++]!()
      if (next < waiting.length && clock() - started >= sliceMs) break
    }
    this.waiting = waiting.slice(next)
    this.scheduled = this.waiting.length > 0
    if (this.scheduled) setImmediate(this.drain)
  }
}
