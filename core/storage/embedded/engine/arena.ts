/**
 * Where a collection keeps its documents' bytes: large append-only slabs, each document named by
 * a number (slab * SLAB + offset). One Buffer object per document would cost more than a small
 * document itself; a number in a Map costs nothing extra.
 *
 * Bytes are never overwritten: an update appends the new version and the old one becomes dead
 * space. That makes a copy of the handles plus the slab list a consistent snapshot while writes
 * go on. When more than half of the bytes are dead, `compact()` copies the live documents into
 * fresh slabs.
 */
const SLAB = 1 << 24
const FIRST_SLAB = 1 << 16

export type Handle = number

function lengthAt(slab: Buffer, offset: number): number {
  return slab.readInt32LE(offset)
}

export class Arena {
  private slabs: Buffer[] = []
  private fill = 0
  private liveBytes = 0
  private totalBytes = 0

  get live(): number {
    return this.liveBytes
  }

  add(bytes: Uint8Array): Handle {
    if (bytes.length > SLAB) throw new RangeError('document larger than an arena slab')
    const current = this.slabs[this.slabs.length - 1]
    if (!current || this.fill + bytes.length > current.length) {
      // Slabs start small and double, so that a small collection stays small.
      const size = Math.min(SLAB, Math.max(FIRST_SLAB, bytes.length, (current?.length ?? 0) * 2))
      this.slabs.push(Buffer.allocUnsafeSlow(size))
      this.fill = 0
    }
    const index = this.slabs.length - 1
    this.slabs[index].set(bytes, this.fill)
    const handle = index * SLAB + this.fill
    this.fill += bytes.length
    this.liveBytes += bytes.length
    this.totalBytes += bytes.length
    return handle
  }

  /** A view of the document's bytes (valid until the next compaction drops its slab). */
  get(handle: Handle): Buffer {
    const slab = this.slabs[Math.floor(handle / SLAB)]
    const offset = handle % SLAB
    return slab.subarray(offset, offset + lengthAt(slab, offset))
  }

  sizeOf(handle: Handle): number {
    return lengthAt(this.slabs[Math.floor(handle / SLAB)], handle % SLAB)
  }

  free(handle: Handle): void {
    this.liveBytes -= this.sizeOf(handle)
  }

  /** Worth compacting: mostly dead space, and enough of it to matter. */
  get wasteful(): boolean {
    return this.totalBytes - this.liveBytes > Math.max(SLAB, this.liveBytes)
  }

  /** Copies every live document (the handles given) into fresh slabs; returns their new handles. */
  compact(handles: Iterable<[string, Handle]>): Map<string, Handle> {
    const old = this.slabs
    const moved = new Map<string, Handle>()
    this.slabs = []
    this.fill = 0
    this.liveBytes = 0
    this.totalBytes = 0
    for (const [key, handle] of handles) {
      const slab = old[Math.floor(handle / SLAB)]
      const offset = handle % SLAB
      moved.set(key, this.add(slab.subarray(offset, offset + lengthAt(slab, offset))))
    }
    return moved
  }

  /** The slabs as they are now: with a copy of the handles, a consistent image of the documents. */
  frozen(): { slabs: Buffer[]; get(handle: Handle): Buffer } {
    const slabs = [...this.slabs]
    return {
      slabs,
      get: (handle) => {
        const slab = slabs[Math.floor(handle / SLAB)]
        const offset = handle % SLAB
        return slab.subarray(offset, offset + lengthAt(slab, offset))
      },
    }
  }
}
