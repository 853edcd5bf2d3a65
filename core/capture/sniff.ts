/**
 * Cheap checks on raw payload bytes: what encoding a body probably carries, without decoding it.
 * Every check looks at bytes only, so a 20 MB body costs at most one linear scan.
 */

export type CompressionHint = 'gzip' | 'lz64' | 'base64'

const HINTS: Record<string, CompressionHint> = {
  gzip: 'gzip',
  'gzip-js': 'gzip',
  lz64: 'lz64',
  'lz-string': 'lz64',
  base64: 'base64',
  b64: 'base64',
}

/** A recognised `compression` value or Content-Encoding; anything else means "no hint". */
export function compressionHint(value: string | undefined): CompressionHint | undefined {
  if (value === undefined) return undefined
  return HINTS[value.trim().toLowerCase()]
}

export function hasGzipMagic(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b
}

const FORM_KEYS = ['data=', '_=', 'ip=', 'compression=', 'ver=']
const FORM_SNIFF_BYTES = 128

/**
 * A body that opens with one of the form fields posthog-js uses. A JSON, gzip or base64 body
 * can never start like this, so it is safe to sniff whatever the Content-Type says.
 */
export function startsLikeForm(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, FORM_SNIFF_BYTES)).toString('latin1')
  return FORM_KEYS.some((key) => head.startsWith(key))
}

/**
 * PostHog's looser test, used only when the client declared a form: a form field at the start
 * or after an `&` within the first 128 bytes.
 */
export function looksLikeForm(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, FORM_SNIFF_BYTES)).toString('latin1')
  return FORM_KEYS.some((key) => head.startsWith(key) || head.includes(`&${key}`))
}

const STRICT_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
const LOOSE_BASE64 = /^[A-Za-z0-9+/\-_\s]+={0,3}\s*$/

/** Standard alphabet, padded: what posthog-js and `btoa` produce. */
export function isStrictBase64(text: string): boolean {
  return text.length % 4 === 0 && STRICT_BASE64.test(text)
}

/**
 * Also tolerates whitespace (a urldecoded `+` becomes a space), url-safe letters, missing padding,
 * and the three `=` that lz-string's compressToBase64 appends when its output length is 1 mod 4.
 */
export function isLooseBase64(text: string): boolean {
  return text.length > 0 && LOOSE_BASE64.test(text)
}

/** Urldecoding turned every `+` of a base64 value into a space; put them back. */
export function restorePlus(text: string): string {
  return text.includes(' ') && isLooseBase64(text) ? text.replaceAll(' ', '+') : text
}

export function decodeBase64(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ''), 'base64')
}
