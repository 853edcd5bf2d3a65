/**
 * The puts and removes of one write transaction, as the journal (journal.ts) keeps them:
 *
 *   u64 sequence number | op*
 *   op = u8 store | u8 kind (1 put, 2 remove) | u32 key length | key | put: u32 value length | value
 *
 * Replaying them on the file as of a checkpoint redoes the transaction exactly (the values are
 * whole: a put sets, a remove deletes), whatever the command that made them.
 */
const PUT = 1
const REMOVE = 2
const SEQ_BYTES = 8
const FIRST_BYTES = 64 * 1024
const KEEP_BYTES = 1024 * 1024

export type OpKind = typeof PUT | typeof REMOVE

export interface RecordedOp {
  store: number
  kind: OpKind
  key: Buffer
  value?: Buffer
}

/**
 * Collects the operations of the transaction under way. A transaction larger than `limit` is not
 * kept (a drop of a large collection would otherwise hold all its keys in memory): `take` then
 * says it overflowed, and the caller makes that commit durable by a checkpoint instead.
 */
export class CommitRecorder {
  private buffer = Buffer.allocUnsafe(FIRST_BYTES)
  private length = SEQ_BYTES
  private overflowed = false

  constructor(private readonly limit: number) {}

  get empty(): boolean {
    return this.length === SEQ_BYTES && !this.overflowed
  }

  put(store: number, key: Uint8Array, value: Uint8Array): void {
    this.op(store, PUT, key, value)
  }

  remove(store: number, key: Uint8Array): void {
    this.op(store, REMOVE, key, undefined)
  }

  private op(store: number, kind: OpKind, key: Uint8Array, value: Uint8Array | undefined): void {
    if (this.overflowed) return
    const bytes = 6 + key.length + (value ? 4 + value.length : 0)
    if (this.length + bytes > this.limit) {
      this.overflowed = true
      this.buffer = Buffer.allocUnsafe(FIRST_BYTES)
      return
    }
    this.reserve(bytes)
    const b = this.buffer
    let at = this.length
    b[at++] = store
    b[at++] = kind
    at = b.writeUInt32LE(key.length, at)
    b.set(key, at)
    at += key.length
    if (value) {
      at = b.writeUInt32LE(value.length, at)
      b.set(value, at)
      at += value.length
    }
    this.length = at
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes))
    this.buffer.copy(grown, 0, 0, this.length)
    this.buffer = grown
  }

  /** The transaction's record under `seq` (a view of the recorder's buffer: copy it before the next op), or 'overflowed'. */
  take(seq: number): Buffer | 'overflowed' {
    const overflowed = this.overflowed
    this.overflowed = false
    const length = this.length
    this.length = SEQ_BYTES
    if (overflowed) return 'overflowed'
    this.buffer.writeBigUInt64LE(BigInt(seq), 0)
    const record = this.buffer.subarray(0, length)
    // the buffer of a large transaction is not kept for the small ones after it
    if (this.buffer.length > KEEP_BYTES) this.buffer = Buffer.allocUnsafe(FIRST_BYTES)
    return record
  }

  /** Forgets the transaction under way (its commit failed). */
  discard(): void {
    this.length = SEQ_BYTES
    this.overflowed = false
  }
}

export function recordSeq(body: Uint8Array): number {
  return Number(Buffer.from(body.buffer, body.byteOffset, body.byteLength).readBigUInt64LE(0))
}

/** The operations of a record's body, in the order they were made. */
export function* recordOps(body: Uint8Array): Generator<RecordedOp> {
  const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  let at = SEQ_BYTES
  while (at < b.length) {
    const store = b[at]!
    const kind = b[at + 1] as OpKind
    const keyLength = b.readUInt32LE(at + 2)
    at += 6
    const key = b.subarray(at, at + keyLength)
    at += keyLength
    if (kind === REMOVE) {
      yield { store, kind, key }
      continue
    }
    const valueLength = b.readUInt32LE(at)
    at += 4
    yield { store, kind, key, value: b.subarray(at, at + valueLength) }
    at += valueLength
  }
}

export const OP = { put: PUT, remove: REMOVE } as const
