/**
 * A cap on how deeply a capture payload nests, checked on the JSON text before it is parsed.
 * MongoDB refuses documents nested over 100 levels; without this cap such an event would be
 * acknowledged by a lenient store and refused by a real one (and retried by the SDK forever), and a
 * 100,000-level payload would cost the parser and every recursive step for nothing.
 */
export const MAX_NESTING = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d

/** Whether `text` opens more than `max` objects or arrays inside each other (strings skipped). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) i = closingQuote(text, i)
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--
  }
  return false
}

/**
 * The index of the quote that closes the string opened at `open` (text.length if none): found
 * with indexOf, which is several times faster than reading the string's characters one by one
 * (most of a payload is string contents). A quote after an odd run of backslashes is escaped;
 * each backslash is counted once, for the quote it precedes, so the scan stays linear.
 */
function closingQuote(text: string, open: number): number {
  let at = open
  for (;;) {
    at = text.indexOf('"', at + 1)
    if (at < 0) return text.length
    let backslashes = 0
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return at
  }
}
