/**
 * Encoded keys (engine/key-encoding.ts) are JavaScript strings ordered by UTF-16 code units; lmdb
 * orders keys as bytes. Each code unit is written as UTF-8 would write a code point of that value
 * (1 to 3 bytes, lone surrogates included), which keeps the order, keeps the encoding
 * prefix-free, and never produces the byte 0xFF (used below as "after every key").
 *
 * Every stored document and index entry goes through here, so an entry's parts are written into one
 * buffer (no concatenation). Encoding loops in JavaScript: for keys of a few dozen characters that is
 * cheaper than a call into Buffer's UTF-8 writer, which would also need a surrogate check first
 * (UTF-8 writes a pair as one 4-byte code point and a lone surrogate as U+FFFD). For the same
 * reason decoding loops too (keys hold bytes over 0x7f, V8's slow UTF-8 path).
 */
function writeUnits(s: string, out: Buffer, at: number): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) out[at++] = c
    else if (c < 0x800) {
      out[at++] = 0xc0 | (c >> 6)
      out[at++] = 0x80 | (c & 0x3f)
    } else {
      out[at++] = 0xe0 | (c >> 12)
      out[at++] = 0x80 | ((c >> 6) & 0x3f)
      out[at++] = 0x80 | (c & 0x3f)
    }
  }
  return at
}

/** Bytes `s` encodes to. */
export function byteLength(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : 3
  }
  return n
}

/** `head` followed by the encodings of `parts`, in one new buffer. */
export function joinBytes(head: Uint8Array, ...parts: string[]): Buffer {
  let length = head.length
  for (const part of parts) length += part.length * 3
  const out = Buffer.allocUnsafe(length)
  out.set(head, 0)
  let at = head.length
  for (const part of parts) at = writeUnits(part, out, at)
  return out.subarray(0, at)
}

/**
 * One buffer reused for keys: lmdb copies a key (and a value) during the synchronous put or get it
 * is given to, so the bytes of the next key can overwrite them. A view it returns is good until
 * the next call on the same scratch: keep nothing across.
 */
export class ScratchBytes {
  private buffer = Buffer.allocUnsafeSlow(4096)

  private room(length: number): Buffer {
    if (length > this.buffer.length) this.buffer = Buffer.allocUnsafeSlow(Math.max(length, this.buffer.length * 2))
    return this.buffer
  }

  /** `head` then the encodings of `a` and `b` (joinBytes without the new buffer). */
  join(head: Uint8Array, a: string, b = ''): Buffer {
    const out = this.room(head.length + (a.length + b.length) * 3)
    out.set(head, 0)
    const end = writeUnits(b, out, writeUnits(a, out, head.length))
    return out.subarray(0, end)
  }
}

export function toBytes(s: string): Buffer {
  return joinBytes(EMPTY, s)
}

const EMPTY = Buffer.alloc(0)

export function fromBytes(b: Uint8Array, start = 0, end = b.length): string {
  const units: number[] = []
  let i = start
  while (i < end) {
    const c = b[i]
    if (c < 0x80) {
      units.push(c)
      i += 1
    } else if (c < 0xe0) {
      units.push(((c & 0x1f) << 6) | (b[i + 1] & 0x3f))
      i += 2
    } else {
      units.push(((c & 0x0f) << 12) | ((b[i + 1] & 0x3f) << 6) | (b[i + 2] & 0x3f))
      i += 3
    }
  }
  let s = ''
  for (let j = 0; j < units.length; j += 4096) s += String.fromCharCode(...units.slice(j, j + 4096))
  return s
}

/** A u32 prefix naming one collection's documents or one index's entries inside a shared store. */
export function prefixBytes(n: number): Buffer {
  const b = Buffer.allocUnsafe(4)
  b.writeUInt32BE(n)
  return b
}
