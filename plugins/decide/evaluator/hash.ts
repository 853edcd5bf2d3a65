import { hash } from 'node:crypto';
import { formatNumber } from './properties/values.ts';

/** 2^60 − 1, the scale of the 15-hex-digit prefix (§2). */
const LONG_SCALE = Number(0xfffffffffffffffn);

/** 2^28: the 7 hex digits after the first 8. */
const LOW_SCALE = 0x10000000;

/**
 * SHA-1 of `prefix + identifier + salt`, first 60 bits (15 hex digits) scaled into [0, 1].
 * The one-shot `hash` with hex output is several times cheaper than createHash().digest() and a
 * BigInt, and a flags request hashes once per flag. The 60-bit value is the sum of two exact
 * doubles (32 bits × 2^28 and 28 bits), so the addition rounds it once, to nearest even, exactly
 * as `Number(bigint)` does.
 */
export function calculateHash(prefix: string, identifier: string, salt: string): number {
  const hex = hash('sha1', `${prefix}${identifier}${salt}`, 'hex');
  const value = Number.parseInt(hex.slice(0, 8), 16) * LOW_SCALE + Number.parseInt(hex.slice(8, 15), 16);
  return value / LONG_SCALE;
}

/**
 * The rollout (salt "") or variant (salt "variant") hash of an identifier for a
 * flag. An empty identifier hashes to 0.0, which lands inside every rollout
 * (§4.5: the server's code does this, whatever its comment says).
 */
export function hashFor(flagKey: string, identifier: string, salt = ''): number {
  if (identifier === '') return 0;
  return calculateHash(`${flagKey}.`, identifier, salt);
}

/** The holdout hash has no flag key, so a holdout excludes the same people from every flag (§6.2). */
export function holdoutHash(identifier: string): number {
  return calculateHash('holdout-', identifier, '');
}

const MAX_DISTINCT_ID_CHARS = 200;

/** A numeric distinct id becomes its JSON text; ids are cut to 200 characters (code points) (§4.1). */
export function normalizeDistinctId(raw: string | number): string {
  const text = typeof raw === 'number' ? formatNumber(raw) : raw;
  // Rust checks the byte length, then keeps 200 chars; counting code points is the same cut.
  const codePoints = Array.from(text);
  return codePoints.length > MAX_DISTINCT_ID_CHARS ? codePoints.slice(0, MAX_DISTINCT_ID_CHARS).join('') : text;
}
