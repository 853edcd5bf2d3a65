import { mongoError } from '../errors.ts'
import type { DocStore } from '../engine/doc-store.ts'
import { byteLength, fromBytes, joinBytes, prefixBytes } from './byte-keys.ts'
import { MAX_KEY_BYTES, walk, type LmdbStores } from './environment.ts'

const RECORD = 8

function recordBytes(prefix: Buffer, record: number): Buffer {
  const b = Buffer.alloc(4 + RECORD)
  prefix.copy(b, 0)
  b.writeUIntBE(record, 4 + 2, 6)
  return b
}

/** Count, bytes and next record number of a collection, kept beside its documents. */
export function statsKey(prefix: number): Buffer {
  return Buffer.concat([Buffer.from('stats/', 'latin1'), prefixBytes(prefix)])
}

export function keyTooLong(what: string, bytes: number): Error {
  return mongoError('KeyTooLong', `${what} is too large to store (${bytes} bytes encoded, at most ${MAX_KEY_BYTES})`)
}

/** One collection's documents in lmdb (see environment.ts for the layout). */
export class LmdbDocStore implements DocStore {
  private readonly lo: Buffer
  private readonly hi: Buffer
  private count = 0
  private bytes = 0
  private nextRecord = 1
  private dropped = false
  /** The counters as last written: a transaction that leaves them so writes nothing to `meta`. */
  private written = ''

  /**
   * `live`: the counters are read from the file at each use, as of the caller's read transaction
   * (a reader thread, whose collections another thread writes); otherwise read once and kept.
   */
  constructor(
    private readonly env: LmdbStores,
    readonly prefix: number,
    private readonly live = false,
  ) {
    this.lo = prefixBytes(prefix)
    this.hi = prefixBytes(prefix + 1)
    this.readCounters()
  }

  private readCounters(): void {
    const stats = this.env.meta.getBinary(statsKey(this.prefix))
    if (!stats) return
    this.count = stats.readDoubleBE(0)
    this.bytes = stats.readDoubleBE(8)
    this.nextRecord = stats.readDoubleBE(16)
    this.written = this.countersKey()
  }

  private countersKey(): string {
    return `${this.count} ${this.bytes} ${this.nextRecord}`
  }

  get size(): number {
    if (this.live) this.readCounters()
    return this.count
  }

  get dataBytes(): number {
    if (this.live) this.readCounters()
    return this.bytes
  }

  private key(idKey: string): Buffer {
    return joinBytes(this.lo, idKey)
  }

  has(idKey: string): boolean {
    return this.env.docs.getBinaryFast(this.key(idKey)) !== undefined
  }

  raw(idKey: string): Buffer | undefined {
    return this.env.docs.getBinary(this.key(idKey))?.subarray(RECORD)
  }

  *ids(reverse = false): Generator<string> {
    for (const { value } of walk(this.env.natural, this.lo, this.hi, reverse)) yield fromBytes(value)
  }

  /** Positions are record numbers: a build resumed after a restart starts after the last one it scanned. */
  *scan(position: number): Generator<{ id: string; position: number }> {
    const end = recordBytes(this.lo, this.nextRecord)
    for (const { key, value } of walk(this.env.natural, recordBytes(this.lo, position + 1), end, false, 256))
      yield { id: fromBytes(value), position: key.readUIntBE(4 + 2, 6) }
  }

  *entries(): Generator<[string, Buffer]> {
    for (const id of this.ids()) {
      const raw = this.raw(id)
      if (raw) yield [id, raw]
    }
  }

  check(idKey: string): void {
    const length = 4 + byteLength(idKey)
    if (length > MAX_KEY_BYTES) throw keyTooLong('the _id', length)
  }

  /** The record number and size of a stored document, read in place (no copy of its bytes). */
  private stored(key: Buffer): { record: number; size: number } | undefined {
    const docs = this.env.docs as unknown as { getBinaryFast(key: Buffer): Buffer | undefined; lastSize: number }
    const view = docs.getBinaryFast(key)
    // the view may be lmdb's shared buffer, longer than the value: lastSize is the value's length
    return view && { record: view.readUIntBE(2, 6), size: docs.lastSize - RECORD }
  }

  put(idKey: string, raw: Uint8Array, absent = false): void {
    const key = this.key(idKey)
    const old = absent ? undefined : this.stored(key)
    let record: number
    if (old) {
      record = old.record
      this.bytes -= old.size
    } else {
      record = this.nextRecord++
      this.count += 1
      this.env.natural.putSync(recordBytes(this.lo, record), key.subarray(4))
    }
    const value = Buffer.allocUnsafe(RECORD + raw.length)
    value.writeUInt16BE(0, 0)
    value.writeUIntBE(record, 2, 6)
    value.set(raw, RECORD)
    this.env.docs.putSync(key, value)
    this.bytes += raw.length
    this.env.touched(this)
  }

  delete(idKey: string): void {
    const key = this.key(idKey)
    const old = this.stored(key)
    if (!old) return
    this.bytes -= old.size
    this.count -= 1
    this.env.natural.removeSync(recordBytes(this.lo, old.record))
    this.env.docs.removeSync(key)
    this.env.touched(this)
  }

  /** Writes the counters (once per transaction that changed them). */
  flush(): void {
    if (this.dropped) return
    // an update that keeps the document's size changes no counter: writing them would dirty a page
    const counters = this.countersKey()
    if (counters === this.written) return
    this.written = counters
    const b = Buffer.allocUnsafe(24)
    b.writeDoubleBE(this.count, 0)
    b.writeDoubleBE(this.bytes, 8)
    b.writeDoubleBE(this.nextRecord, 16)
    this.env.meta.putSync(statsKey(this.prefix), b)
  }

  /** Removes every document and the counters (the collection is dropped). */
  clear(): void {
    for (const db of [this.env.docs, this.env.natural]) {
      for (const { key } of walk(db, this.lo, this.hi, false, 1024)) db.removeSync(key)
    }
    this.env.meta.removeSync(statsKey(this.prefix))
    this.count = 0
    this.bytes = 0
    this.dropped = true
  }
}
