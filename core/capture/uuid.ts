import { randomFillSync } from 'node:crypto'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** The 48-bit millisecond field of a UUIDv7 ends in the year 10889. */
const MAX_V7_MS = 2 ** 48 - 1

/** Cryptographic random bytes drawn in blocks: one `randomBytes` call per event cost 3-4 % of capture CPU. */
const POOL = Buffer.alloc(4096)
let poolOffset = POOL.length

function randomInto(target: Buffer, start: number): void {
  const count = target.length - start
  if (poolOffset + count > POOL.length) {
    randomFillSync(POOL)
    poolOffset = 0
  }
  POOL.copy(target, start, poolOffset, poolOffset + count)
  poolOffset += count
}

/** The hyphenated 8-4-4-4-12 hex form, any version, either case. */
export function isUuid(text: string): boolean {
  return UUID.test(text)
}

/**
 * RFC 9562 version 7: 48 bits of Unix milliseconds taken from `at`, then the version nibble,
 * 12 random bits, the `10` variant and 62 random bits. Times before 1970 use 0.
 */
export function uuidv7(at: Date = new Date()): string {
  const ms = Math.min(Math.max(Math.floor(at.getTime()) || 0, 0), MAX_V7_MS)
  const bytes = Buffer.allocUnsafe(16)
  bytes.writeUIntBE(ms, 0, 6)
  randomInto(bytes, 6)
  bytes[6] = 0x70 | (bytes[6]! & 0x0f)
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
