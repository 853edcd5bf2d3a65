/**
 * Writes take turns with reads. The server runs every command on one thread, so a read that
 * arrives while writes are queued (a burst of large inserts) would wait for all of them. mongod
 * serves reads beside other clients' writes; here, queued writes run one after another for at most
 * TURN_MS of one turn of the event loop (a check phase), then the reads that arrived meanwhile
 * (next poll phase) run before the rest. A read therefore waits for at most a turn's worth of
 * writes, while small writes still run many to a turn. Commands of one connection stay in order
 * (the connection runs them one after the other), and a write answers only once applied, so no
 * client can observe the reordering.
 */
const TURN_MS = 1

export class WriteTurns {
  private readonly waiting: Array<() => void> = []
  private holder = false
  private scheduled = false
  private turnStart = 0

  /** Resolves when the caller may write; it must call done() once its write is applied. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve)
      if (!this.holder) this.schedule()
    })
  }

  /** The write is applied: the next one runs in this turn if the turn has time left, else in the next. */
  done(): void {
    this.holder = false
    if (!this.waiting.length) return
    if (performance.now() - this.turnStart < TURN_MS) this.pass()
    else this.schedule()
  }

  private pass(): void {
    this.holder = true
    this.waiting.shift()!()
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      if (this.holder || !this.waiting.length) return
      this.turnStart = performance.now()
      this.pass()
    })
  }
}
