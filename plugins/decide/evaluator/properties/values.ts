/**
 * How the server turns JSON values into text and numbers (serde_json + Rust's
 * f64 parser), reproduced so that comparisons agree character for character.
 */

/** Rust's `str::parse::<f64>`: no whitespace, no hex, accepts inf/infinity/nan. */
const RUST_FLOAT = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i

export function parseRustF64(text: string): number | null {
  if (!RUST_FLOAT.test(text)) return null
  const unsigned = text.replace(/^[+-]/, '').toLowerCase()
  const negative = text.startsWith('-')
  if (unsigned === 'nan') return NaN
  if (unsigned === 'inf' || unsigned === 'infinity') return negative ? -Infinity : Infinity
  return Number(text)
}

/** serde_json's compact text of a value; strings are themselves (the server's `to_string_representation`). */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value
  return toJson(value)
}

/** Compact JSON as serde_json writes it (numbers in ryu's shortest form). */
export function toJson(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'number') return formatNumber(value)
  if (typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`
  }
  return 'null'
}

/**
 * Integers that fit serde's i64/u64 print as plain digits; other numbers as
 * ryu does (`1e21`, `1.5e-7`, `0.001`). A JSON `1.0` has already become the
 * integer 1 by the time JavaScript sees it, so it prints as `1`, not `1.0`.
 */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return 'null'
  if (Number.isInteger(n) && Math.abs(n) < 1.8446744073709552e19) return BigInt(n).toString()
  const [mantissa, exp] = n.toExponential().split('e')
  const negative = mantissa.startsWith('-')
  const digits = mantissa.replace('-', '').replace('.', '')
  const point = Number(exp) + 1 // position of the decimal point after the first digit
  let body: string
  if (point >= digits.length && point <= 16) body = `${digits}${'0'.repeat(point - digits.length)}.0`
  else if (point > 0 && point <= 16) body = `${digits.slice(0, point)}.${digits.slice(point)}`
  else if (point > -5 && point <= 0) body = `0.${'0'.repeat(-point)}${digits}`
  else body = `${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${point - 1}`
  return negative ? `-${body}` : body
}

/** `to_f64_representation`: a JSON number, or text that Rust parses as f64. */
export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return value
  return parseRustF64(toText(value))
}

const HAS_ASCII_UPPER = /[A-Z]/

/** ASCII-only lowercasing, as Rust's `to_ascii_lowercase`. */
export function asciiLower(text: string): string {
  // most texts have no capital letter: testing first spares the replacement's copy and callback
  if (!HAS_ASCII_UPPER.test(text)) return text
  return text.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32))
}
