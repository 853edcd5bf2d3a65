/**
 * The entries of one index: (key, document id) pairs kept sorted by key, then id. Stored as a list
 * of small sorted chunks (parallel string arrays, no object per entry), which keeps inserts and
 * deletes O(log n + chunk) and memory close to the strings themselves.
 */
const MAX_CHUNK = 512

interface Chunk {
  keys: string[]
  ids: string[]
}

function compare(keyA: string, idA: string, keyB: string, idB: string): number {
  if (keyA !== keyB) return keyA < keyB ? -1 : 1
  if (idA === idB) return 0
  return idA < idB ? -1 : 1
}

export interface Entry {
  key: string
  id: string
}

export class SortedEntries {
  private chunks: Chunk[] = []
  private count = 0
  /** Bumped by every change, so that open range walks know to re-seek. */
  private version = 0

  get size(): number {
    return this.count
  }

  /** Index of the first chunk whose last entry is >= (key, id); chunks.length if none. */
  private chunkFor(key: string, id: string): number {
    let lo = 0
    let hi = this.chunks.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const c = this.chunks[mid]
      const last = c.keys.length - 1
      if (compare(c.keys[last], c.ids[last], key, id) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** First position in `c` whose entry is >= (key, id). */
  private static position(c: Chunk, key: string, id: string): number {
    let lo = 0
    let hi = c.keys.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compare(c.keys[mid], c.ids[mid], key, id) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  insert(key: string, id: string): void {
    if (this.chunks.length === 0) {
      this.chunks.push({ keys: [key], ids: [id] })
      this.count = 1
      this.version += 1
      return
    }
    let ci = this.chunkFor(key, id)
    if (ci === this.chunks.length) ci -= 1
    const c = this.chunks[ci]
    const at = SortedEntries.position(c, key, id)
    if (at < c.keys.length && c.keys[at] === key && c.ids[at] === id) return
    c.keys.splice(at, 0, key)
    c.ids.splice(at, 0, id)
    this.count += 1
    this.version += 1
    if (c.keys.length > MAX_CHUNK) {
      const half = c.keys.length >>> 1
      this.chunks.splice(ci + 1, 0, { keys: c.keys.splice(half), ids: c.ids.splice(half) })
    }
  }

  delete(key: string, id: string): boolean {
    const ci = this.chunkFor(key, id)
    if (ci === this.chunks.length) return false
    const c = this.chunks[ci]
    const at = SortedEntries.position(c, key, id)
    if (at >= c.keys.length || c.keys[at] !== key || c.ids[at] !== id) return false
    c.keys.splice(at, 1)
    c.ids.splice(at, 1)
    this.count -= 1
    this.version += 1
    if (c.keys.length === 0) this.chunks.splice(ci, 1)
    return true
  }

  /** Ids of the entries whose key equals `key`. */
  idsWithKey(key: string): string[] {
    const out: string[] = []
    this.collectKey(key, out)
    return out
  }

  /**
   * Appends the ids of the entries whose key equals `key` to `out`: a point lookup (unique checks,
   * equality finds) without the generator and entry objects of `range`.
   */
  collectKey(key: string, out: string[]): void {
    let [ci, at] = this.seekAfter(key, '', true)
    while (ci < this.chunks.length) {
      const c = this.chunks[ci]
      for (; at < c.keys.length; at++) {
        if (c.keys[at] !== key) return
        out.push(c.ids[at])
      }
      ci += 1
      at = 0
    }
  }

  /**
   * Entries with lo <= key <= hi, ascending or descending. Safe to interleave with inserts and
   * deletes (a cursor reads its batches between writes): after any change, the walk re-seeks
   * just past the last entry it returned.
   */
  *range(lo: string, hi: string, descending: boolean): Generator<Entry> {
    if (lo > hi) return
    let version = this.version
    let ci: number
    let at: number
    if (descending) [ci, at] = this.seekBefore(hi, '\uffff', true)
    else [ci, at] = this.seekAfter(lo, '', true)
    while (ci >= 0 && ci < this.chunks.length) {
      const c = this.chunks[ci]
      if (at < 0 || at >= c.keys.length) {
        ci += descending ? -1 : 1
        at = descending ? (this.chunks[ci]?.keys.length ?? 0) - 1 : 0
        continue
      }
      const key = c.keys[at]
      const id = c.ids[at]
      if (descending ? key < lo : key > hi) return
      yield { key, id }
      if (this.version !== version) {
        version = this.version
        ;[ci, at] = descending ? this.seekBefore(key, id, false) : this.seekAfter(key, id, false)
      } else {
        at += descending ? -1 : 1
      }
    }
  }

  /** Position of the first entry > (key, id), or >= when `inclusive`. */
  private seekAfter(key: string, id: string, inclusive: boolean): [number, number] {
    let ci = this.chunkFor(key, id)
    if (ci === this.chunks.length) return [ci, 0]
    let at = SortedEntries.position(this.chunks[ci], key, id)
    const c = this.chunks[ci]
    if (!inclusive && at < c.keys.length && c.keys[at] === key && c.ids[at] === id) at += 1
    if (at >= c.keys.length) [ci, at] = [ci + 1, 0]
    return [ci, at]
  }

  /** Position of the last entry < (key, id), or <= when `inclusive`. */
  private seekBefore(key: string, id: string, inclusive: boolean): [number, number] {
    if (this.chunks.length === 0) return [-1, -1]
    let ci = Math.min(this.chunkFor(key, id), this.chunks.length - 1)
    const c = this.chunks[ci]
    let at = SortedEntries.position(c, key, id)
    if (inclusive && at < c.keys.length && c.keys[at] === key && c.ids[at] === id) return [ci, at]
    at -= 1
    if (at < 0) {
      ci -= 1
      at = ci >= 0 ? this.chunks[ci].keys.length - 1 : -1
    }
    return [ci, at]
  }

  clear(): void {
    this.chunks = []
    this.count = 0
    this.version += 1
  }

  /** Takes over the entries of `other` (a finished build); open walks re-seek. */
  protected replaceWith(other: SortedEntries): void {
    this.chunks = other.chunks
    this.count = other.count
    this.version += 1
  }

  /** Builds the list from unsorted entries at once (index builds, recovery). */
  static build(entries: Entry[]): SortedEntries {
    entries.sort((a, b) => compare(a.key, a.id, b.key, b.id))
    const list = new SortedEntries()
    for (let i = 0; i < entries.length; i += MAX_CHUNK / 2) {
      const slice = entries.slice(i, i + MAX_CHUNK / 2)
      list.chunks.push({ keys: slice.map((e) => e.key), ids: slice.map((e) => e.id) })
    }
    list.count = entries.length
    return list
  }
}
