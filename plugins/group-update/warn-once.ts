/**
 * Remembers which keys were warned about recently, so that a condition repeated on every event (a
 * sixth group type in `$groups`, sent by an SDK with each event) is recorded once per window, not
 * once per event. Bounded: when full, the oldest entries are forgotten first.
 */
export class WarnOnce {
  private readonly warnedAt = new Map<string, number>()

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** True the first time `key` is seen in a window. */
  shouldWarn(key: string, now = Date.now()): boolean {
    const last = this.warnedAt.get(key)
    if (last !== undefined && now - last < this.windowMs) return false
    this.warnedAt.delete(key)
    while (this.warnedAt.size >= this.maxKeys) this.warnedAt.delete(this.warnedAt.keys().next().value as string)
    this.warnedAt.set(key, now)
    return true
  }
}
