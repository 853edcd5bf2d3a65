import { formatNumber } from './properties/values.ts'
import { sha1Prefix60Of, utf8Bytes } from './sha1-prefix.ts'

/** 2^60 − 1, the scale of the 15-hex-digit prefix (§2). */
const LONG_SCALE = Number(0xfffffffffffffffn)

/**
 * SHA-1 of `prefix + identifier + salt`, first 60 bits (15 hex digits) scaled into [0, 1].
 * A flags request hashes once or twice per flag; computing SHA-1 in JavaScript and reading the
 * prefix from the state words is about 1.8× cheaper per call than node:crypto's one-shot `hash`
 * with hex output, which was itself several times cheaper than createHash().digest() and a BigInt.
 * The 60-bit prefix comes back as one correctly rounded double, as `Number(bigint)` would give it.
 * The prefix and salt come in UTF-8, made once (hashPrefix, saltBytes).
 */
function calculateHash(prefix: HashPrefix, identifier: string, salt: Uint8Array): number {
  return sha1Prefix60Of(prefix.bytes, identifier, salt) / LONG_SCALE
}

/** The UTF-8 of a hash's prefix, which ends with an ASCII character (sha1Prefix60Of relies on it). */
export interface HashPrefix {
  readonly bytes: Uint8Array
}

/** A flag's rollout and variant hashes' prefix, `${flagKey}.`; compiled flags keep theirs. */
export function hashPrefix(flagKey: string): HashPrefix {
  return { bytes: utf8Bytes(`${flagKey}.`) }
}

const HOLDOUT_PREFIX = { bytes: utf8Bytes('holdout-') }
const SALTS: Record<string, Uint8Array> = { '': new Uint8Array(0), variant: utf8Bytes('variant') }

/** The salt's UTF-8; salts start with an ASCII character ("" and "variant" are PostHog's). */
function saltBytes(salt: string): Uint8Array {
  return SALTS[salt] ?? utf8Bytes(salt)
}

/** Prefixes of the flags the interpreter hashes, by key (compiled flags hold their own). */
const prefixes = new Map<string, HashPrefix>()

function prefixOf(flagKey: string): HashPrefix {
  let prefix = prefixes.get(flagKey)
  if (prefix === undefined) {
    if (prefixes.size >= 4096) prefixes.clear()
    prefixes.set(flagKey, (prefix = hashPrefix(flagKey)))
  }
  return prefix
}

/**
 * The rollout (salt "") or variant (salt "variant") hash of an identifier for a
 * flag. An empty identifier hashes to 0.0, which lands inside every rollout
 * (§4.5: the server's code does this, whatever its comment says).
 */
export function hashFor(flagKey: string, identifier: string, salt = ''): number {
  return hashWithPrefix(prefixOf(flagKey), identifier, salt)
}

/** hashFor with the flag's prefix made beforehand. */
export function hashWithPrefix(prefix: HashPrefix, identifier: string, salt = ''): number {
  if (identifier === '') return 0
  return calculateHash(prefix, identifier, saltBytes(salt))
}

/** The holdout hash has no flag key, so a holdout excludes the same people from every flag (§6.2). */
export function holdoutHash(identifier: string): number {
  return calculateHash(HOLDOUT_PREFIX, identifier, SALTS['']!)
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
