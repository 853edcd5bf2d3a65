import { randomFillSync } from 'node:crypto'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** The 48-bit millisecond field of a UUIDv7 ends in the year 10889. */
const MAX_V7_MS = 2 ** 48 - 1

/** Cryptographic random bytes drawn in blocks: one `randomBytes` call per event cost 3-4 % of capture CPU. */
const POOL = Buffer.alloc(4096)
let poolOffset = POOL.length

/** The offset in POOL of `count` fresh random bytes. */
function randomOffset(count: number): number {
  if (poolOffset + count > POOL.length) {
    randomFillSync(POOL)
    poolOffset = 0
  }
  const at = poolOffset
  poolOffset += count
  return at
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/** The hyphenated 8-4-4-4-12 hex form, any version, either case. */
export function isUuid(text: string): boolean {
  return UUID.test(text)
}

/**
 * The form a uuid is stored and compared in: lower-case hex, as PostHog's capture prints every uuid
 * it parses, so that an SDK's retry is the same event whatever case it sends (the (project, uuid)
 * index and the queue's message ids compare text). Anything that is not a uuid is left as it is,
 * for the validate step to refuse.
 */
export function canonicalUuid(text: string): string {
  return isUuid(text) ? text.toLowerCase() : text
}

/**
 * RFC 9562 version 7: 48 bits of Unix milliseconds taken from `at`, then the version nibble,
 * 12 random bits, the `10` variant and 62 random bits. Times before 1970 use 0.
 */
export function uuidv7(at: Date = new Date()): string {
  const ms = Math.min(Math.max(Math.floor(at.getTime()) || 0, 0), MAX_V7_MS)
  // built from a hex table: a Buffer, its hex string and five slices per event showed in profiles
  const high = Math.floor(ms / 2 ** 32)
  const low = ms >>> 0
  const r = randomOffset(10)
  const b = POOL
  return (
    HEX[(high >>> 8) & 0xff]! +
    HEX[high & 0xff]! +
    HEX[low >>> 24]! +
    HEX[(low >>> 16) & 0xff]! +
    '-' +
    HEX[(low >>> 8) & 0xff]! +
    HEX[low & 0xff]! +
    '-' +
    HEX[0x70 | (b[r]! & 0x0f)]! +
    HEX[b[r + 1]!]! +
    '-' +
    HEX[0x80 | (b[r + 2]! & 0x3f)]! +
    HEX[b[r + 3]!]! +
    '-' +
    HEX[b[r + 4]!]! +
    HEX[b[r + 5]!]! +
    HEX[b[r + 6]!]! +
    HEX[b[r + 7]!]! +
    HEX[b[r + 8]!]! +
    HEX[b[r + 9]!]!
  )
}
