import type { IndexEntries } from '../engine/doc-store.ts'
import type { Entry } from '../engine/sorted-entries.ts'
import { byteLength, fromBytes, joinBytes, prefixBytes, ScratchBytes } from './byte-keys.ts'
import { keyTooLong } from './doc-store.ts'
import { MAX_KEY_BYTES, putNew, walk, type LmdbStores } from './environment.ts'

const AFTER = Buffer.from([0xff])

/** The lmdb key and value of the entry being written (ScratchBytes: good until the next). */
const scratchKey = new ScratchBytes()
const scratchValue = new ScratchBytes()
const NO_PREFIX = Buffer.alloc(0)

/** A non-unique entry's value, the _id's length: one shared buffer per length (lmdb copies values). */
const idLengths: Buffer[] = []

function idLengthBytes(length: number): Buffer {
  let bytes = idLengths[length]
  if (!bytes) {
    bytes = Buffer.alloc(2)
    bytes.writeUInt16BE(length)
    idLengths[length] = bytes
  }
  return bytes
}

/**
 * One index's entries in lmdb, in (index key, _id) order. A unique index holds one _id per key,
 * so its lmdb key is prefix | index key and the value the encoded _id: a uniqueness check or an
 * equality lookup is one get. Any other index keys prefix | index key | encoded _id (both encodings
 * are prefix-free, so byte order is (index key, _id) order) with the _id's length as the value.
 */
export class LmdbEntries implements IndexEntries {
  private readonly lo: Buffer
  private readonly hi: Buffer

  constructor(
    private readonly env: LmdbStores,
    readonly prefix: number,
    readonly unique: boolean,
  ) {
    this.lo = prefixBytes(prefix)
    this.hi = prefixBytes(prefix + 1)
  }

  private keyOf(key: string): Buffer {
    return joinBytes(this.lo, key)
  }

  /** The lmdb key of one entry (a view of scratchKey). */
  private entryKey(key: string, id: string): Buffer {
    return this.unique ? scratchKey.join(this.lo, key) : scratchKey.join(this.lo, key, id)
  }

  /** The lmdb value of one entry (a view of scratchValue, or shared: never written to). */
  private entryValue(id: string): Buffer {
    return this.unique ? scratchValue.join(NO_PREFIX, id) : idLengthBytes(byteLength(id))
  }

  /** Where the index key ends and the _id begins in an lmdb entry, and the _id. */
  private split(k: Buffer, value: Buffer): { keyEnd: number; id: string } {
    if (this.unique) return { keyEnd: k.length, id: fromBytes(value) }
    const keyEnd = k.length - value.readUInt16BE(0)
    return { keyEnd, id: fromBytes(k, keyEnd) }
  }

  check(key: string, id: string): void {
    const length = 4 + byteLength(key) + (this.unique ? 0 : byteLength(id))
    if (length > MAX_KEY_BYTES) throw keyTooLong('an index key', length)
  }

  insert(key: string, id: string): void {
    this.env.entries.putSync(this.entryKey(key, id), this.entryValue(id))
  }

  claim(key: string, id: string): boolean {
    // a unique index's lmdb key is the index key alone: a no-overwrite put fails on a taken key
    if (this.unique) return putNew(this.env.entries, this.entryKey(key, id), this.entryValue(id))
    this.insert(key, id)
    return true
  }

  delete(key: string, id: string): boolean {
    const k = this.entryKey(key, id)
    if (this.unique && !this.env.entries.getBinary(k)?.equals(this.entryValue(id))) return false
    return this.env.entries.removeSync(k)
  }

  idsWithKey(key: string): string[] {
    const out: string[] = []
    this.collectKey(key, out)
    return out
  }

  collectKey(key: string, out: string[]): void {
    const start = this.keyOf(key)
    if (this.unique) {
      const id = this.env.entries.getBinary(start)
      if (id) out.push(fromBytes(id))
      return
    }
    for (const { key: k, value } of walk(this.env.entries, start, Buffer.concat([start, AFTER]), false, 64)) {
      const { keyEnd, id } = this.split(k, value)
      if (keyEnd === start.length) out.push(id)
    }
  }

  *range(lo: string, hi: string, descending: boolean): Generator<Entry> {
    if (lo > hi) return
    const loBytes = this.keyOf(lo)
    const hiBytes = this.keyOf(hi)
    const source = descending
      ? walk(this.env.entries, this.lo, Buffer.concat([hiBytes, AFTER]), true)
      : walk(this.env.entries, loBytes, this.hi, false)
    for (const { key: k, value } of source) {
      const { keyEnd, id } = this.split(k, value)
      const keyPart = k.subarray(0, keyEnd)
      if (descending ? Buffer.compare(keyPart, loBytes) < 0 : Buffer.compare(keyPart, hiBytes) > 0) return
      if (descending && Buffer.compare(keyPart, hiBytes) > 0) continue
      yield { key: fromBytes(k, 4, keyEnd), id }
    }
  }

  load(entries: Entry[]): void {
    this.clear()
    for (const e of entries) this.insert(e.key, e.id)
  }

  clear(): void {
    for (const { key } of walk(this.env.entries, this.lo, this.hi, false, 1024)) this.env.entries.removeSync(key)
  }
}
