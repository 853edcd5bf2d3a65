/**
 * Per-key event rates over a sliding window, in constant memory per key: the "sliding window
 * counter" (the count of the current fixed window plus the previous window's count weighted by how
 * much of it still overlaps the sliding window). Keys (a project and a distinct_id) are kept in
 * least-recently-seen order and the oldest is forgotten when the map is full; a key that is spiking
 * is never the oldest.
 *
 * The order is a linked list through the keys' states, and the states are found in one map per
 * project keyed by the distinct_id as parsed: moving a key to the recent end is four pointer writes,
 * where a Map's delete-and-set (plus a "project\0id" string built and hashed per event) showed in the
 * personless capture bench's profiles.
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
  readonly projectId: number
  readonly distinctId: string
  window: number
  current: number
  previous: number
  warnedAt: number
  /** Neighbours in least-recently-seen order: `older` toward the oldest, `newer` toward the newest. */
  older: KeyState | undefined
  newer: KeyState | undefined
}

export class SpikeDetector {
  private readonly projects = new Map<number, Map<string, KeyState>>()
  private oldest: KeyState | undefined
  private newest: KeyState | undefined
  private count = 0

  constructor(private readonly options: SpikeDetectorOptions) {}

  get size(): number {
    return this.count
  }

  /** Counts one event of the key at `now` (ms) and says whether it is over the rate. */
  record(projectId: number, distinctId: string, now: number): SpikeVerdict {
    const { windowMs, maxEventsPerWindow } = this.options
    const window = Math.floor(now / windowMs)
    const state = this.touch(projectId, distinctId, window)
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
  private touch(projectId: number, distinctId: string, window: number): KeyState {
    let keys = this.projects.get(projectId)
    const known = keys?.get(distinctId)
    if (known) {
      if (known !== this.newest) {
        this.unlink(known)
        this.append(known)
      }
      return known
    }
    while (this.count >= this.options.maxKeys && this.oldest) this.forget(this.oldest)
    if (!keys) this.projects.set(projectId, (keys = new Map()))
    const state: KeyState = {
      projectId,
      distinctId,
      window,
      current: 0,
      previous: 0,
      warnedAt: -Infinity,
      older: undefined,
      newer: undefined,
    }
    keys.set(distinctId, state)
    this.count++
    this.append(state)
    return state
  }

  private forget(state: KeyState): void {
    this.unlink(state)
    const keys = this.projects.get(state.projectId)!
    keys.delete(state.distinctId)
    if (!keys.size) this.projects.delete(state.projectId)
    this.count--
  }

  private unlink(state: KeyState): void {
    if (state.older) state.older.newer = state.newer
    else this.oldest = state.newer
    if (state.newer) state.newer.older = state.older
    else this.newest = state.older
    state.older = state.newer = undefined
  }

  private append(state: KeyState): void {
    state.older = this.newest
    if (this.newest) this.newest.newer = state
    else this.oldest = state
    this.newest = state
  }
}
