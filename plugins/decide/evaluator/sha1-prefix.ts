/**
 * SHA-1 of a string's UTF-8 bytes, reduced to the first 60 bits of the digest (flags.md §2).
 *
 * A flags request hashes about twice per flag, each time a short string. node:crypto's one-shot
 * `hash` spends most of its time crossing into C++, building the hex string and parsing it back, not
 * on SHA-1 itself. This computes the digest here, in a buffer that lives as long as the module, and
 * reads the prefix from the first two state words instead of formatting a digest.
 */

/** 2^28: h1's top 28 bits sit below h0's 32. */
const LOW_SCALE = 0x10000000

/** Texts up to ~1,300 UTF-16 units (3 bytes each at worst) reuse this buffer; longer ones get their own. */
const SHARED_BYTES = 4096
const sharedBytes = new Uint8Array(SHARED_BYTES)
const sharedView = new DataView(sharedBytes.buffer)

/**
 * Encodes to UTF-8 in native code, where a surrogate without its partner becomes U+FFFD (EF BF BD)
 * exactly as node:crypto encodes a string. A JavaScript `charCodeAt` loop is faster only while it
 * sees few string shapes: once the hashed strings vary (cons, flat, two-byte, internalized) its
 * property access goes megamorphic and it is 3–4× slower than this.
 */
const encoder = new TextEncoder()

/** SHA-1's chaining state h0–h4, carried from one 64-byte block to the next. */
const state = new Int32Array(5)

/**
 * The 60-bit prefix (first 15 hex digits) of SHA-1 of the UTF-8 bytes of `text`, as the double
 * `h0 * 2^28 + (h1 >>> 4)`. Both terms are exact, so the sum is rounded once, to nearest even,
 * exactly as `Number(bigint)` rounds the 60-bit integer.
 */
export function sha1Prefix60(text: string): number {
  // The worst case is 3 bytes per UTF-16 unit, plus at most 72 bytes of padding.
  const capacity = text.length * 3 + 72
  const bytes = capacity <= SHARED_BYTES ? sharedBytes : new Uint8Array(capacity)
  return digest(bytes, encoder.encodeInto(text, bytes).written)
}

/** UTF-8 of `text` (a lone surrogate as U+FFFD). */
export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text)
}

/** The last identifier hashed and its UTF-8: a request hashes the same one for most of its flags. */
let lastIdentifier = ''
let lastIdentifierBytes = new Uint8Array(0)

/**
 * `sha1Prefix60(prefix + identifier + salt)` for a prefix and salt already in UTF-8 (made once per
 * flag), the identifier encoded once for all the flags that hash it in a row: encoding each whole
 * text anew was half of the hash's cost. The caller's prefix ends and its salt starts with an ASCII
 * character, so no surrogate pair is split between the parts and their bytes are the whole text's.
 */
export function sha1Prefix60Of(prefix: Uint8Array, identifier: string, salt: Uint8Array): number {
  if (identifier !== lastIdentifier) {
    lastIdentifierBytes = encoder.encode(identifier)
    lastIdentifier = identifier
  }
  const middle = lastIdentifierBytes
  const length = prefix.length + middle.length + salt.length
  const bytes = length + 72 <= SHARED_BYTES ? sharedBytes : new Uint8Array(length + 72)
  bytes.set(prefix, 0)
  bytes.set(middle, prefix.length)
  bytes.set(salt, prefix.length + middle.length)
  return digest(bytes, length)
}

/** The 60-bit prefix of SHA-1 of the first `length` bytes of `bytes`, which has room for the padding. */
function digest(bytes: Uint8Array, length: number): number {
  const view = bytes === sharedBytes ? sharedView : new DataView(bytes.buffer)
  const blocks = pad(bytes, length)
  state[0] = 0x67452301
  state[1] = 0xefcdab89
  state[2] = 0x98badcfe
  state[3] = 0x10325476
  state[4] = 0xc3d2e1f0
  for (let block = 0; block < blocks; block++) compressBlock(view, block << 6)
  return (state[0] >>> 0) * LOW_SCALE + (state[1] >>> 4)
}

/**
 * Appends SHA-1's padding after `length` message bytes (0x80, zeros, then the length in bits as a
 * 64-bit big-endian integer) and returns the number of 64-byte blocks. The zeros are written every
 * time because the shared buffer still holds the previous message.
 */
function pad(bytes: Uint8Array, length: number): number {
  const blocks = ((length + 8) >> 6) + 1
  const end = blocks << 6
  bytes[length] = 0x80
  bytes.fill(0, length + 1, end - 8)
  const bitsHigh = Math.floor(length / 0x20000000)
  const bitsLow = (length << 3) >>> 0
  for (let i = 0; i < 4; i++) {
    bytes[end - 8 + i] = bitsHigh >>> (24 - 8 * i)
    bytes[end - 4 + i] = bitsLow >>> (24 - 8 * i)
  }
  return blocks
}

/**
 * One SHA-1 compression of the 64-byte block at `offset` into `state`. Written out round by round:
 * the message schedule lives in 16 locals (a ring, w[t] replacing w[t − 16]) and the five working
 * variables change roles instead of being shifted along, which makes it ~2.5× faster than a loop
 * over an 80-word schedule array in V8. Additions wrap to 32 bits with `| 0`; the round constants
 * above 2^31 are written as their negative int32 values.
 */
function compressBlock(view: DataView, offset: number): void {
  let a = state[0],
    b = state[1],
    c = state[2],
    d = state[3],
    e = state[4]
  let w0 = view.getInt32(offset + 0),
    w1 = view.getInt32(offset + 4),
    w2 = view.getInt32(offset + 8),
    w3 = view.getInt32(offset + 12)
  let w4 = view.getInt32(offset + 16),
    w5 = view.getInt32(offset + 20),
    w6 = view.getInt32(offset + 24),
    w7 = view.getInt32(offset + 28)
  let w8 = view.getInt32(offset + 32),
    w9 = view.getInt32(offset + 36),
    w10 = view.getInt32(offset + 40),
    w11 = view.getInt32(offset + 44)
  let w12 = view.getInt32(offset + 48),
    w13 = view.getInt32(offset + 52),
    w14 = view.getInt32(offset + 56),
    w15 = view.getInt32(offset + 60)
  // Rounds 0–19: choose
  e = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + w0 + 0x5a827999) | 0
  b = (b << 30) | (b >>> 2)
  d = (((e << 5) | (e >>> 27)) + ((a & b) | (~a & c)) + d + w1 + 0x5a827999) | 0
  a = (a << 30) | (a >>> 2)
  c = (((d << 5) | (d >>> 27)) + ((e & a) | (~e & b)) + c + w2 + 0x5a827999) | 0
  e = (e << 30) | (e >>> 2)
  b = (((c << 5) | (c >>> 27)) + ((d & e) | (~d & a)) + b + w3 + 0x5a827999) | 0
  d = (d << 30) | (d >>> 2)
  a = (((b << 5) | (b >>> 27)) + ((c & d) | (~c & e)) + a + w4 + 0x5a827999) | 0
  c = (c << 30) | (c >>> 2)
  e = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + w5 + 0x5a827999) | 0
  b = (b << 30) | (b >>> 2)
  d = (((e << 5) | (e >>> 27)) + ((a & b) | (~a & c)) + d + w6 + 0x5a827999) | 0
  a = (a << 30) | (a >>> 2)
  c = (((d << 5) | (d >>> 27)) + ((e & a) | (~e & b)) + c + w7 + 0x5a827999) | 0
  e = (e << 30) | (e >>> 2)
  b = (((c << 5) | (c >>> 27)) + ((d & e) | (~d & a)) + b + w8 + 0x5a827999) | 0
  d = (d << 30) | (d >>> 2)
  a = (((b << 5) | (b >>> 27)) + ((c & d) | (~c & e)) + a + w9 + 0x5a827999) | 0
  c = (c << 30) | (c >>> 2)
  e = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + w10 + 0x5a827999) | 0
  b = (b << 30) | (b >>> 2)
  d = (((e << 5) | (e >>> 27)) + ((a & b) | (~a & c)) + d + w11 + 0x5a827999) | 0
  a = (a << 30) | (a >>> 2)
  c = (((d << 5) | (d >>> 27)) + ((e & a) | (~e & b)) + c + w12 + 0x5a827999) | 0
  e = (e << 30) | (e >>> 2)
  b = (((c << 5) | (c >>> 27)) + ((d & e) | (~d & a)) + b + w13 + 0x5a827999) | 0
  d = (d << 30) | (d >>> 2)
  a = (((b << 5) | (b >>> 27)) + ((c & d) | (~c & e)) + a + w14 + 0x5a827999) | 0
  c = (c << 30) | (c >>> 2)
  e = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + w15 + 0x5a827999) | 0
  b = (b << 30) | (b >>> 2)
  w0 ^= w13 ^ w8 ^ w2
  w0 = (w0 << 1) | (w0 >>> 31)
  d = (((e << 5) | (e >>> 27)) + ((a & b) | (~a & c)) + d + w0 + 0x5a827999) | 0
  a = (a << 30) | (a >>> 2)
  w1 ^= w14 ^ w9 ^ w3
  w1 = (w1 << 1) | (w1 >>> 31)
  c = (((d << 5) | (d >>> 27)) + ((e & a) | (~e & b)) + c + w1 + 0x5a827999) | 0
  e = (e << 30) | (e >>> 2)
  w2 ^= w15 ^ w10 ^ w4
  w2 = (w2 << 1) | (w2 >>> 31)
  b = (((c << 5) | (c >>> 27)) + ((d & e) | (~d & a)) + b + w2 + 0x5a827999) | 0
  d = (d << 30) | (d >>> 2)
  w3 ^= w0 ^ w11 ^ w5
  w3 = (w3 << 1) | (w3 >>> 31)
  a = (((b << 5) | (b >>> 27)) + ((c & d) | (~c & e)) + a + w3 + 0x5a827999) | 0
  c = (c << 30) | (c >>> 2)
  // Rounds 20–39: parity
  w4 ^= w1 ^ w12 ^ w6
  w4 = (w4 << 1) | (w4 >>> 31)
  e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w4 + 0x6ed9eba1) | 0
  b = (b << 30) | (b >>> 2)
  w5 ^= w2 ^ w13 ^ w7
  w5 = (w5 << 1) | (w5 >>> 31)
  d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + w5 + 0x6ed9eba1) | 0
  a = (a << 30) | (a >>> 2)
  w6 ^= w3 ^ w14 ^ w8
  w6 = (w6 << 1) | (w6 >>> 31)
  c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + w6 + 0x6ed9eba1) | 0
  e = (e << 30) | (e >>> 2)
  w7 ^= w4 ^ w15 ^ w9
  w7 = (w7 << 1) | (w7 >>> 31)
  b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + w7 + 0x6ed9eba1) | 0
  d = (d << 30) | (d >>> 2)
  w8 ^= w5 ^ w0 ^ w10
  w8 = (w8 << 1) | (w8 >>> 31)
  a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + w8 + 0x6ed9eba1) | 0
  c = (c << 30) | (c >>> 2)
  w9 ^= w6 ^ w1 ^ w11
  w9 = (w9 << 1) | (w9 >>> 31)
  e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w9 + 0x6ed9eba1) | 0
  b = (b << 30) | (b >>> 2)
  w10 ^= w7 ^ w2 ^ w12
  w10 = (w10 << 1) | (w10 >>> 31)
  d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + w10 + 0x6ed9eba1) | 0
  a = (a << 30) | (a >>> 2)
  w11 ^= w8 ^ w3 ^ w13
  w11 = (w11 << 1) | (w11 >>> 31)
  c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + w11 + 0x6ed9eba1) | 0
  e = (e << 30) | (e >>> 2)
  w12 ^= w9 ^ w4 ^ w14
  w12 = (w12 << 1) | (w12 >>> 31)
  b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + w12 + 0x6ed9eba1) | 0
  d = (d << 30) | (d >>> 2)
  w13 ^= w10 ^ w5 ^ w15
  w13 = (w13 << 1) | (w13 >>> 31)
  a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + w13 + 0x6ed9eba1) | 0
  c = (c << 30) | (c >>> 2)
  w14 ^= w11 ^ w6 ^ w0
  w14 = (w14 << 1) | (w14 >>> 31)
  e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w14 + 0x6ed9eba1) | 0
  b = (b << 30) | (b >>> 2)
  w15 ^= w12 ^ w7 ^ w1
  w15 = (w15 << 1) | (w15 >>> 31)
  d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + w15 + 0x6ed9eba1) | 0
  a = (a << 30) | (a >>> 2)
  w0 ^= w13 ^ w8 ^ w2
  w0 = (w0 << 1) | (w0 >>> 31)
  c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + w0 + 0x6ed9eba1) | 0
  e = (e << 30) | (e >>> 2)
  w1 ^= w14 ^ w9 ^ w3
  w1 = (w1 << 1) | (w1 >>> 31)
  b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + w1 + 0x6ed9eba1) | 0
  d = (d << 30) | (d >>> 2)
  w2 ^= w15 ^ w10 ^ w4
  w2 = (w2 << 1) | (w2 >>> 31)
  a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + w2 + 0x6ed9eba1) | 0
  c = (c << 30) | (c >>> 2)
  w3 ^= w0 ^ w11 ^ w5
  w3 = (w3 << 1) | (w3 >>> 31)
  e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w3 + 0x6ed9eba1) | 0
  b = (b << 30) | (b >>> 2)
  w4 ^= w1 ^ w12 ^ w6
  w4 = (w4 << 1) | (w4 >>> 31)
  d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + w4 + 0x6ed9eba1) | 0
  a = (a << 30) | (a >>> 2)
  w5 ^= w2 ^ w13 ^ w7
  w5 = (w5 << 1) | (w5 >>> 31)
  c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + w5 + 0x6ed9eba1) | 0
  e = (e << 30) | (e >>> 2)
  w6 ^= w3 ^ w14 ^ w8
  w6 = (w6 << 1) | (w6 >>> 31)
  b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + w6 + 0x6ed9eba1) | 0
  d = (d << 30) | (d >>> 2)
  w7 ^= w4 ^ w15 ^ w9
  w7 = (w7 << 1) | (w7 >>> 31)
  a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + w7 + 0x6ed9eba1) | 0
  c = (c << 30) | (c >>> 2)
  // Rounds 40–59: majority
  w8 ^= w5 ^ w0 ^ w10
  w8 = (w8 << 1) | (w8 >>> 31)
  e = (((a << 5) | (a >>> 27)) + ((b & c) | (d & (b | c))) + e + w8 - 0x70e44324) | 0
  b = (b << 30) | (b >>> 2)
  w9 ^= w6 ^ w1 ^ w11
  w9 = (w9 << 1) | (w9 >>> 31)
  d = (((e << 5) | (e >>> 27)) + ((a & b) | (c & (a | b))) + d + w9 - 0x70e44324) | 0
  a = (a << 30) | (a >>> 2)
  w10 ^= w7 ^ w2 ^ w12
  w10 = (w10 << 1) | (w10 >>> 31)
  c = (((d << 5) | (d >>> 27)) + ((e & a) | (b & (e | a))) + c + w10 - 0x70e44324) | 0
  e = (e << 30) | (e >>> 2)
  w11 ^= w8 ^ w3 ^ w13
  w11 = (w11 << 1) | (w11 >>> 31)
  b = (((c << 5) | (c >>> 27)) + ((d & e) | (a & (d | e))) + b + w11 - 0x70e44324) | 0
  d = (d << 30) | (d >>> 2)
  w12 ^= w9 ^ w4 ^ w14
  w12 = (w12 << 1) | (w12 >>> 31)
  a = (((b << 5) | (b >>> 27)) + ((c & d) | (e & (c | d))) + a + w12 - 0x70e44324) | 0
  c = (c << 30) | (c >>> 2)
  w13 ^= w10 ^ w5 ^ w15
  w13 = (w13 << 1) | (w13 >>> 31)
  e = (((a << 5) | (a >>> 27)) + ((b & c) | (d & (b | c))) + e + w13 - 0x70e44324) | 0
  b = (b << 30) | (b >>> 2)
  w14 ^= w11 ^ w6 ^ w0
  w14 = (w14 << 1) | (w14 >>> 31)
  d = (((e << 5) | (e >>> 27)) + ((a & b) | (c & (a | b))) + d + w14 - 0x70e44324) | 0
  a = (a << 30) | (a >>> 2)
  w15 ^= w12 ^ w7 ^ w1
  w15 = (w15 << 1) | (w15 >>> 31)
  c = (((d << 5) | (d >>> 27)) + ((e & a) | (b & (e | a))) + c + w15 - 0x70e44324) | 0
  e = (e << 30) | (e >>> 2)
  w0 ^= w13 ^ w8 ^ w2
  w0 = (w0 << 1) | (w0 >>> 31)
  b = (((c << 5) | (c >>> 27)) + ((d & e) | (a & (d | e))) + b + w0 - 0x70e44324) | 0
  d = (d << 30) | (d >>> 2)
  w1 ^= w14 ^ w9 ^ w3
  w1 = (w1 << 1) | (w1 >>> 31)
  a = (((b << 5) | (b >>> 27)) + ((c & d) | (e & (c | d))) + a + w1 - 0x70e44324) | 0
  c = (c << 30) | (c >>> 2)
  w2 ^= w15 ^ w10 ^ w4
  w2 = (w2 << 1) | (w2 >>> 31)
  e = (((a << 5) | (a >>> 27)) + ((b & c) | (d & (b | c))) + e + w2 - 0x70e44324) | 0
  b = (b << 30) | (b >>> 2)
  w3 ^= w0 ^ w11 ^ w5
  w3 = (w3 << 1) | (w3 >>> 31)
  d = (((e << 5) | (e >>> 27)) + ((a & b) | (c & (a | b))) + d + w3 - 0x70e44324) | 0
  a = (a << 30) | (a >>> 2)
  w4 ^= w1 ^ w12 ^ w6
  w4 = (w4 << 1) | (w4 >>> 31)
  c = (((d << 5) | (d >>> 27)) + ((e & a) | (b & (e | a))) + c + w4 - 0x70e44324) | 0
  e = (e << 30) | (e >>> 2)
  w5 ^= w2 ^ w13 ^ w7
  w5 = (w5 << 1) | (w5 >>> 31)
  b = (((c << 5) | (c >>> 27)) + ((d & e) | (a & (d | e))) + b + w5 - 0x70e44324) | 0
  d = (d << 30) | (d >>> 2)
  w6 ^= w3 ^ w14 ^ w8
  w6 = (w6 << 1) | (w6 >>> 31)
  a = (((b << 5) | (b >>> 27)) + ((c & d) | (e & (c | d))) + a + w6 - 0x70e44324) | 0
  c = (c << 30) | (c >>> 2)
  w7 ^= w4 ^ w15 ^ w9
  w7 = (w7 << 1) | (w7 >>> 31)
  e = (((a << 5) | (a >>> 27)) + ((b & c) | (d & (b | c))) + e + w7 - 0x70e44324) | 0
  b = (b << 30) | (b >>> 2)
  w8 ^= w5 ^ w0 ^ w10
  w8 = (w8 << 1) | (w8 >>> 31)
  d = (((e << 5) | (e >>> 27)) + ((a & b) | (c & (a | b))) + d + w8 - 0x70e44324) | 0
  a = (a << 30) | (a >>> 2)
  w9 ^= w6 ^ w1 ^ w11
  w9 = (w9 << 1) | (w9 >>> 31)
  c = (((d << 5) | (d >>> 27)) + ((e & a) | (b & (e | a))) + c + w9 - 0x70e44324) | 0
  e = (e << 30) | (e >>> 2)
  w10 ^= w7 ^ w2 ^ w12
  w10 = (w10 << 1) | (w10 >>> 31)
  b = (((c << 5) | (c >>> 27)) + ((d & e) | (a & (d | e))) + b + w10 - 0x70e44324) | 0
  d = (d << 30) | (d >>> 2)
  w11 ^= w8 ^ w3 ^ w13
  w11 = (w11 << 1) | (w11 >>> 31)
  a = (((b << 5) | (b >>> 27)) + ((c & d) | (e & (c | d))) + a + w11 - 0x70e44324) | 0
  c = (c << 30) | (c >>> 2)
  // Rounds 60–79: parity
  w12 ^= w9 ^ w4 ^ w14
  w12 = (w12 << 1) | (w12 >>> 31)
  e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w12 - 0x359d3e2a) | 0
  b = (b << 30) | (b >>> 2)
  w13 ^= w10 ^ w5 ^ w15
  w13 = (w13 << 1) | (w13 >>> 31)
  d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + w13 - 0x359d3e2a) | 0
  a = (a << 30) | (a >>> 2)
  w14 ^= w11 ^ w6 ^ w0
  w14 = (w14 << 1) | (w14 >>> 31)
  c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + w14 - 0x359d3e2a) | 0
  e = (e << 30) | (e >>> 2)
  w15 ^= w12 ^ w7 ^ w1
  w15 = (w15 << 1) | (w15 >>> 31)
  b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + w15 - 0x359d3e2a) | 0
  d = (d << 30) | (d >>> 2)
  w0 ^= w13 ^ w8 ^ w2
  w0 = (w0 << 1) | (w0 >>> 31)
  a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + w0 - 0x359d3e2a) | 0
  c = (c << 30) | (c >>> 2)
  w1 ^= w14 ^ w9 ^ w3
  w1 = (w1 << 1) | (w1 >>> 31)
  e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w1 - 0x359d3e2a) | 0
  b = (b << 30) | (b >>> 2)
  w2 ^= w15 ^ w10 ^ w4
  w2 = (w2 << 1) | (w2 >>> 31)
  d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + w2 - 0x359d3e2a) | 0
  a = (a << 30) | (a >>> 2)
  w3 ^= w0 ^ w11 ^ w5
  w3 = (w3 << 1) | (w3 >>> 31)
  c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + w3 - 0x359d3e2a) | 0
  e = (e << 30) | (e >>> 2)
  w4 ^= w1 ^ w12 ^ w6
  w4 = (w4 << 1) | (w4 >>> 31)
  b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + w4 - 0x359d3e2a) | 0
  d = (d << 30) | (d >>> 2)
  w5 ^= w2 ^ w13 ^ w7
  w5 = (w5 << 1) | (w5 >>> 31)
  a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + w5 - 0x359d3e2a) | 0
  c = (c << 30) | (c >>> 2)
  w6 ^= w3 ^ w14 ^ w8
  w6 = (w6 << 1) | (w6 >>> 31)
  e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w6 - 0x359d3e2a) | 0
  b = (b << 30) | (b >>> 2)
  w7 ^= w4 ^ w15 ^ w9
  w7 = (w7 << 1) | (w7 >>> 31)
  d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + w7 - 0x359d3e2a) | 0
  a = (a << 30) | (a >>> 2)
  w8 ^= w5 ^ w0 ^ w10
  w8 = (w8 << 1) | (w8 >>> 31)
  c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + w8 - 0x359d3e2a) | 0
  e = (e << 30) | (e >>> 2)
  w9 ^= w6 ^ w1 ^ w11
  w9 = (w9 << 1) | (w9 >>> 31)
  b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + w9 - 0x359d3e2a) | 0
  d = (d << 30) | (d >>> 2)
  w10 ^= w7 ^ w2 ^ w12
  w10 = (w10 << 1) | (w10 >>> 31)
  a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + w10 - 0x359d3e2a) | 0
  c = (c << 30) | (c >>> 2)
  w11 ^= w8 ^ w3 ^ w13
  w11 = (w11 << 1) | (w11 >>> 31)
  e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w11 - 0x359d3e2a) | 0
  b = (b << 30) | (b >>> 2)
  w12 ^= w9 ^ w4 ^ w14
  w12 = (w12 << 1) | (w12 >>> 31)
  d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + w12 - 0x359d3e2a) | 0
  a = (a << 30) | (a >>> 2)
  w13 ^= w10 ^ w5 ^ w15
  w13 = (w13 << 1) | (w13 >>> 31)
  c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + w13 - 0x359d3e2a) | 0
  e = (e << 30) | (e >>> 2)
  w14 ^= w11 ^ w6 ^ w0
  w14 = (w14 << 1) | (w14 >>> 31)
  b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + w14 - 0x359d3e2a) | 0
  d = (d << 30) | (d >>> 2)
  w15 ^= w12 ^ w7 ^ w1
  w15 = (w15 << 1) | (w15 >>> 31)
  a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + w15 - 0x359d3e2a) | 0
  c = (c << 30) | (c >>> 2)
  state[0] = (state[0] + a) | 0
  state[1] = (state[1] + b) | 0
  state[2] = (state[2] + c) | 0
  state[3] = (state[3] + d) | 0
  state[4] = (state[4] + e) | 0
}
