import type { IndexEntries } from '../engine/doc-store.ts'
import type { Entry } from '../engine/sorted-entries.ts'
import { fromBytes, prefixBytes, toBytes } from './byte-keys.ts'
import { keyTooLong } from './doc-store.ts'
import { MAX_KEY_BYTES, walk, type LmdbEnvironment } from './environment.ts'

const AFTER = Buffer.from([0xff])

/**
 * One index's entries in lmdb: the key of each is prefix | index key | encoded _id (both encoded
 * keys are prefix-free, so byte order is (index key, _id) order), the value the _id's length.
 */
export class LmdbEntries implements IndexEntries {
  private readonly lo: Buffer
  private readonly hi: Buffer

  constructor(
    private readonly env: LmdbEnvironment,
    readonly prefix: number,
  ) {
    this.lo = prefixBytes(prefix)
    this.hi = prefixBytes(prefix + 1)
  }

  private entryKey(key: string, id: string): { bytes: Buffer; idLength: Buffer } {
    const idBytes = toBytes(id)
    const idLength = Buffer.allocUnsafe(2)
    idLength.writeUInt16BE(idBytes.length)
    return { bytes: Buffer.concat([this.lo, toBytes(key), idBytes]), idLength }
  }

  check(key: string, id: string): void {
    const length = 4 + toBytes(key).length + toBytes(id).length
    if (length > MAX_KEY_BYTES) throw keyTooLong('an index key', length)
  }

  insert(key: string, id: string): void {
    const { bytes, idLength } = this.entryKey(key, id)
    this.env.entries.putSync(bytes, idLength)
  }

  delete(key: string, id: string): boolean {
    return this.env.entries.removeSync(this.entryKey(key, id).bytes)
  }

  idsWithKey(key: string): string[] {
    const out: string[] = []
    this.collectKey(key, out)
    return out
  }

  collectKey(key: string, out: string[]): void {
    const start = Buffer.concat([this.lo, toBytes(key)])
    for (const { key: k, value } of walk(this.env.entries, start, Buffer.concat([start, AFTER]), false, 64)) {
      const idStart = k.length - value.readUInt16BE(0)
      if (idStart === start.length) out.push(fromBytes(k, idStart))
    }
  }

  *range(lo: string, hi: string, descending: boolean): Generator<Entry> {
    if (lo > hi) return
    const loBytes = Buffer.concat([this.lo, toBytes(lo)])
    const hiBytes = Buffer.concat([this.lo, toBytes(hi)])
    const source = descending
      ? walk(this.env.entries, this.lo, Buffer.concat([hiBytes, AFTER]), true)
      : walk(this.env.entries, loBytes, this.hi, false)
    for (const { key: k, value } of source) {
      const idStart = k.length - value.readUInt16BE(0)
      const keyPart = k.subarray(0, idStart)
      if (descending ? Buffer.compare(keyPart, loBytes) < 0 : Buffer.compare(keyPart, hiBytes) > 0) return
      if (descending && Buffer.compare(keyPart, hiBytes) > 0) continue
      yield { key: fromBytes(k, 4, idStart), id: fromBytes(k, idStart) }
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
