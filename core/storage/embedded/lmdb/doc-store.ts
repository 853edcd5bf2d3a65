import { mongoError } from '../errors.ts'
import type { DocStore } from '../engine/doc-store.ts'
import { byteLength, fromBytes, prefixBytes, ScratchBytes } from './byte-keys.ts'
import { MAX_KEY_BYTES, putNew, walk, type LmdbStores } from './environment.ts'

const RECORD = 8

/** The key, value and natural-order key of the document being read or written (ScratchBytes). */
const scratchKey = new ScratchBytes()
let scratchValue = Buffer.allocUnsafeSlow(64 * 1024)
/** Larger documents get a buffer of their own: the scratch does not keep megabytes alive. */
const SCRATCH_VALUE_MAX = 1024 * 1024
const scratchRecord = Buffer.allocUnsafeSlow(4 + RECORD)

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

interface Stored {
  record: number
  size: number
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
   * The document last read (its encoded _id, the transaction it was read in, its record number and
   * size), good until this store's next write or the next transaction: an update reads a document,
   * checks it is still there and rewrites it, and needs them once. Every write to this collection's
   * documents goes through this object, so nothing else can make them stale.
   */
  private lastRead: string | undefined
  private lastReadIn = 0
  private readonly lastStored: Stored = { record: 0, size: 0 }

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

  /** The lmdb key of a document (a view of scratchKey: good until the next). */
  private key(idKey: string): Buffer {
    return scratchKey.join(this.lo, idKey)
  }

  /** The natural-order key of a record (the same buffer each time: good until the next). */
  private recordKey(record: number): Buffer {
    this.lo.copy(scratchRecord, 0)
    scratchRecord.writeUIntBE(0, 4, 2)
    scratchRecord.writeUIntBE(record, 4 + 2, 6)
    return scratchRecord
  }

  has(idKey: string): boolean {
    return this.storedAt(idKey) !== undefined
  }

  raw(idKey: string): Buffer | undefined {
    const value = this.env.docs.getBinary(this.key(idKey))
    if (!value) return undefined
    this.remember(idKey, value, value.length)
    return value.subarray(RECORD)
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

  private remember(idKey: string, value: Buffer, length: number): Stored {
    this.lastRead = idKey
    this.lastReadIn = this.env.transactionNumber
    this.lastStored.record = value.readUIntBE(2, 6)
    this.lastStored.size = length - RECORD
    return this.lastStored
  }

  /** The record number and size of a stored document, read in place (no copy of its bytes). */
  private storedAt(idKey: string): Stored | undefined {
    if (this.lastRead === idKey && this.lastReadIn === this.env.transactionNumber) return this.lastStored
    const docs = this.env.docs as unknown as { getBinaryFast(key: Buffer): Buffer | undefined; lastSize: number }
    const view = docs.getBinaryFast(this.key(idKey))
    // the view may be lmdb's shared buffer, longer than the value: lastSize is the value's length
    return view && this.remember(idKey, view, docs.lastSize)
  }

  /** The stored value of a document (a view of scratchValue: good until the next). */
  private value(record: number, raw: Uint8Array): Buffer {
    const size = RECORD + raw.length
    if (size > scratchValue.length && size <= SCRATCH_VALUE_MAX)
      scratchValue = Buffer.allocUnsafeSlow(Math.min(size * 2, SCRATCH_VALUE_MAX))
    const value = size <= scratchValue.length ? scratchValue.subarray(0, size) : Buffer.allocUnsafe(size)
    value.writeUInt16BE(0, 0)
    value.writeUIntBE(record, 2, 6)
    value.set(raw, RECORD)
    return value
  }

  put(idKey: string, raw: Uint8Array): void {
    const old = this.storedAt(idKey)
    if (!old) {
      this.insert(idKey, raw)
      return
    }
    this.lastRead = undefined
    this.bytes += raw.length - old.size
    this.env.docs.putSync(this.key(idKey), this.value(old.record, raw))
    this.env.touched(this)
  }

  insert(idKey: string, raw: Uint8Array): boolean {
    const key = this.key(idKey)
    // lmdb's no-overwrite put is the duplicate check: one B-tree descent, not a read and then a put
    if (!putNew(this.env.docs, key, this.value(this.nextRecord, raw))) return false
    this.lastRead = undefined
    this.env.natural.putSync(this.recordKey(this.nextRecord), key.subarray(4))
    this.nextRecord += 1
    this.count += 1
    this.bytes += raw.length
    this.env.touched(this)
    return true
  }

  delete(idKey: string): void {
    const old = this.storedAt(idKey)
    this.lastRead = undefined
    if (!old) return
    this.bytes -= old.size
    this.count -= 1
    this.env.natural.removeSync(this.recordKey(old.record))
    this.env.docs.removeSync(this.key(idKey))
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
    this.lastRead = undefined
    this.count = 0
    this.bytes = 0
    this.dropped = true
  }
}
