/**
 * Per-key event rates over a sliding window, in constant memory per key: the "sliding window
 * counter" (the count of the current fixed window plus the previous window's count weighted by how
 * much of it still overlaps the sliding window). Keys are kept in least-recently-seen order and
 * the oldest is forgotten when the map is full; a key that is spiking is never the oldest.
 */
export interface SpikeDetectorOptions {
  readonly windowMs: number
  /** Events a key may send per window before the extra ones are marked. */
  readonly maxEventsPerWindow: number
  /** Keys remembered at once. */
  readonly maxKeys: number
}

export interface SpikeVerdict {
  /** The event is over the rate: keep it, but mark it. */
  readonly overflow: boolean
  /** First overflow of this key for a window: record one warning. */
  readonly warn: boolean
  /** Events of the key in the sliding window before this one (estimated). */
  readonly rate: number
}

interface KeyState {
  window: number
  current: number
  previous: number
  warnedAt: number
}

export class SpikeDetector {
  private readonly keys = new Map<string, KeyState>()

  constructor(private readonly options: SpikeDetectorOptions) {}

  get size(): number {
    return this.keys.size
  }

  /** Counts one event of `key` at `now` (ms) and says whether it is over the rate. */
  record(key: string, now: number): SpikeVerdict {
    const { windowMs, maxEventsPerWindow } = this.options
    const window = Math.floor(now / windowMs)
    const state = this.touch(key, window)
    if (state.window !== window) {
      state.previous = state.window === window - 1 ? state.current : 0
      state.current = 0
      state.window = window
    }
    const overlap = 1 - (now - window * windowMs) / windowMs
    const rate = state.previous * overlap + state.current
    state.current++
    const overflow = rate >= maxEventsPerWindow
    const warn = overflow && now - state.warnedAt >= windowMs
    if (warn) state.warnedAt = now
    return { overflow, warn, rate: Math.round(rate) }
  }

  /** The key's state, moved to the most recently seen end; the least recent key goes when full. */
  private touch(key: string, window: number): KeyState {
    const state = this.keys.get(key) ?? { window, current: 0, previous: 0, warnedAt: -Infinity }
    this.keys.delete(key)
    while (this.keys.size >= this.options.maxKeys) this.keys.delete(this.keys.keys().next().value as string)
    this.keys.set(key, state)
    return state
  }
}
