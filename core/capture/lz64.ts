/**
 * Decompression of lz-string's `compressToBase64` output with an output budget.
 *
 * lz-string's own `decompressFromBase64` builds its whole result before returning, and its
 * dictionary grows by one character per code, so a few hundred KB of input can expand to
 * gigabytes. This decoder reads the same bit stream but stops as soon as the output passes
 * `maxChars`, and yields to the event loop now and then so a large legacy body does not
 * freeze the server.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='
const VALUE_OF = new Map([...ALPHABET].map((char, index) => [char, index]))
/** Each base64 character carries 6 bits, read from the highest down. */
const BITS_PER_CHAR = 6
const CODES_BETWEEN_YIELDS = 1 << 16

export type Lz64Result = { ok: true; text: string } | { ok: false; reason: 'corrupt' | 'too_large' }

class BitReader {
  private index = 0
  private value = 0
  private mask = 0

  constructor(private readonly input: string) {}

  /** True once every bit of the input is consumed; lz-string gives up on a stream in this state. */
  get exhausted(): boolean {
    return this.index > this.input.length || (this.index === this.input.length && this.mask === 0)
  }

  read(bitCount: number): number {
    let result = 0
    for (let bit = 0; bit < bitCount; bit++) {
      if (this.mask === 0) {
        this.value = VALUE_OF.get(this.input.charAt(this.index)) ?? 0
        this.index++
        this.mask = 1 << (BITS_PER_CHAR - 1)
      }
      if (this.value & this.mask) result |= 1 << bit
      this.mask >>= 1
    }
    return result
  }
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

export async function decompressLz64(input: string, maxChars: number): Promise<Lz64Result> {
  if (input.length === 0) return { ok: false, reason: 'corrupt' }
  const reader = new BitReader(input)
  // Codes 0, 1 and 2 are control codes (8-bit literal, 16-bit literal, end of stream).
  const dictionary: string[] = ['', '', '']
  let codeBits = 3
  let codesUntilWider = 4

  const first = reader.read(2)
  if (first === 2) return { ok: true, text: '' }
  if (first !== 0 && first !== 1) return { ok: false, reason: 'corrupt' }
  let previous = String.fromCharCode(reader.read(first === 0 ? 8 : 16))
  dictionary.push(previous)
  const parts = [previous]
  let outputChars = 1

  for (let codes = 1; ; codes++) {
    if (codes % CODES_BETWEEN_YIELDS === 0) await yieldToEventLoop()
    // Every bit is spent and no end marker came: a truncated stream.
    if (reader.exhausted) return { ok: false, reason: 'corrupt' }
    let code = reader.read(codeBits)
    if (code === 2) return { ok: true, text: parts.join('') }
    if (code === 0 || code === 1) {
      dictionary.push(String.fromCharCode(reader.read(code === 0 ? 8 : 16)))
      code = dictionary.length - 1
      codesUntilWider--
    }
    if (codesUntilWider === 0) {
      codesUntilWider = 2 ** codeBits
      codeBits++
    }

    let entry: string
    if (code < dictionary.length && code > 2) entry = dictionary[code]!
    else if (code === dictionary.length) entry = previous + previous.charAt(0)
    else return { ok: false, reason: 'corrupt' }

    outputChars += entry.length
    if (outputChars > maxChars) return { ok: false, reason: 'too_large' }
    parts.push(entry)
    dictionary.push(previous + entry.charAt(0))
    codesUntilWider--
    previous = entry
    if (codesUntilWider === 0) {
      codesUntilWider = 2 ** codeBits
      codeBits++
    }
  }
}
