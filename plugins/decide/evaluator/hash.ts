import { formatNumber } from './properties/values.ts'
import { sha1Prefix60 } from './sha1-prefix.ts'

/** 2^60 − 1, the scale of the 15-hex-digit prefix (§2). */
const LONG_SCALE = Number(0xfffffffffffffffn)

/**
 * SHA-1 of `prefix + identifier + salt`, first 60 bits (15 hex digits) scaled into [0, 1].
 * A flags request hashes once or twice per flag; computing SHA-1 in JavaScript and reading the
 * prefix from the state words is about 1.8× cheaper per call than node:crypto's one-shot `hash`
 * with hex output, which was itself several times cheaper than createHash().digest() and a BigInt.
 * The 60-bit prefix comes back as one correctly rounded double, as `Number(bigint)` would give it.
 */
export function calculateHash(prefix: string, identifier: string, salt: string): number {
  return sha1Prefix60(`${prefix}${identifier}${salt}`) / LONG_SCALE
}

/**
 * The rollout (salt "") or variant (salt "variant") hash of an identifier for a
 * flag. An empty identifier hashes to 0.0, which lands inside every rollout
 * (§4.5: the server's code does this, whatever its comment says).
 */
export function hashFor(flagKey: string, identifier: string, salt = ''): number {
  if (identifier === '') return 0
  return calculateHash(`${flagKey}.`, identifier, salt)
}

/** The holdout hash has no flag key, so a holdout excludes the same people from every flag (§6.2). */
export function holdoutHash(identifier: string): number {
  return calculateHash('holdout-', identifier, '')
}

const MAX_DISTINCT_ID_CHARS = 200

/** A numeric distinct id becomes its JSON text; ids are cut to 200 characters (code points) (§4.1). */
export function normalizeDistinctId(raw: string | number): string {
  const text = typeof raw === 'number' ? formatNumber(raw) : raw
  // Rust checks the byte length, then keeps 200 chars; counting code points is the same cut. Only
  // the first 200 are walked: a client may send megabytes.
  if (text.length <= MAX_DISTINCT_ID_CHARS) return text
  let end = 0
  for (let count = 0; count < MAX_DISTINCT_ID_CHARS && end < text.length; count++)
    end += (text.codePointAt(end) as number) > 0xffff ? 2 : 1
  return end >= text.length ? text : text.slice(0, end)
}
