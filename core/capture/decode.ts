/**
 * Turns the bytes of a capture request into the JSON text it carries (capture.md §1.2).
 * Liberal on purpose: every encoding PostHog SDKs have ever used is accepted on every path.
 */
import { brotliDecompress, gunzip, inflate } from 'node:zlib'
import { type HttpError, httpError } from '../errors.ts'
import { decompressLz64 } from './lz64.ts'
import {
  compressionHint,
  decodeBase64,
  hasGzipMagic,
  isLooseBase64,
  isStrictBase64,
  looksLikeForm,
  restorePlus,
  startsLikeForm,
  type CompressionHint,
} from './sniff.ts'

export interface RawCaptureRequest {
  method: string
  path: string
  query: Record<string, string | undefined>
  contentType?: string
  contentEncoding?: string
  body: Buffer
}

export interface DecodeLimits {
  /** Bytes on the wire: the body, or the `data` query parameter. */
  maxBodyBytes: number
  /** Bytes of JSON text after every decoding step. */
  maxDecodedBytes: number
}

const FORM_TYPE = 'application/x-www-form-urlencoded'
/** The paths on which PostHog unwraps base64 a second time, after decompression. */
const LEGACY_PATH = /^\/(e|capture|engage|track)(\/|$)/

const BASE64_FIRST_BYTE = /[A-Za-z0-9+/\-_\s]/
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

export async function decodePayload(req: RawCaptureRequest, limits: DecodeLimits): Promise<string> {
  const fromQuery = req.query.data
  const raw = fromQuery ? Buffer.from(restorePlus(fromQuery), 'utf8') : req.body
  if (raw.length === 0) throw httpError('empty_payload', 'request missing data payload')
  if (raw.length > limits.maxBodyBytes) {
    throw httpError(
      'payload_too_large',
      `request payload of ${raw.length} bytes is over the limit of ${limits.maxBodyBytes} bytes`,
    )
  }

  let bytes: Buffer = raw
  let formHint: CompressionHint | undefined
  if (!fromQuery && isForm(raw, req.contentType)) {
    const form = new URLSearchParams(raw.toString('utf8'))
    const data = form.get('data')
    if (!data) throw httpError('empty_payload', 'form body has no data field', 'data')
    bytes = Buffer.from(restorePlus(data), 'utf8')
    formHint = compressionHint(form.get('compression') ?? undefined)
  }
  const hint = compressionHint(req.query.compression) ?? formHint ?? compressionHint(req.contentEncoding)

  // lz64 text is itself valid base64, so unwrapping it would destroy it.
  if (hint !== 'lz64') bytes = unwrapBase64(bytes, hint === 'base64')

  let text = await decompress(bytes, hint, limits.maxDecodedBytes)
  if (LEGACY_PATH.test(req.path)) text = unwrapBase64Text(text)
  if (text.trim() === '') throw httpError('empty_payload', 'request payload is empty once decoded')
  return text
}

function isForm(body: Buffer, contentType: string | undefined): boolean {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase()
  return mediaType === FORM_TYPE ? looksLikeForm(body) : startsLikeForm(body)
}

/** Optimistic: bytes that look like base64 are decoded, and kept as they are if that fails. */
function unwrapBase64(bytes: Buffer, declared: boolean): Buffer {
  // JSON and gzip fail on their first byte; skip copying a large body into a string for them.
  if (!BASE64_FIRST_BYTE.test(String.fromCharCode(bytes[0] ?? 0))) return bytes
  const text = bytes.toString('latin1')
  const looksEncoded = declared ? isLooseBase64(text) : isStrictBase64(text)
  if (!looksEncoded) return bytes
  const decoded = decodeBase64(text)
  return decoded.length > 0 ? decoded : bytes
}

function unwrapBase64Text(text: string): string {
  if (!isStrictBase64(text)) return text
  try {
    return strictUtf8.decode(decodeBase64(text))
  } catch {
    return text
  }
}

async function decompress(bytes: Buffer, hint: CompressionHint | undefined, maxBytes: number): Promise<string> {
  // Gzip is recognised by its magic bytes whatever the hint says (posthog-js sends it unmarked);
  // a gzip hint on bytes that are not gzip is read as plain text rather than refused.
  if (hasGzipMagic(bytes)) return utf8(await decompressBounded('gzip', bytes, maxBytes))
  if (hint === 'lz64') {
    const text = bytes.toString('latin1')
    if (isLooseBase64(text)) return inflateLz64(restorePlus(text).replace(/\s+/g, ''), maxBytes)
  }
  if (bytes.length > maxBytes) throw overDecodedLimit(maxBytes)
  return utf8(bytes)
}

/** The codecs a request body may be compressed with, by Content-Encoding token. */
type Decompress = (
  bytes: Buffer,
  options: { maxOutputLength: number },
  callback: (error: Error | null, output: Buffer) => void,
) => void
const CODECS: Record<'gzip' | 'deflate' | 'br', Decompress> = { gzip: gunzip, deflate: inflate, br: brotliDecompress }
export type Codec = keyof typeof CODECS

/** Decompresses at most `maxBytes`: a larger output is a 413, bytes that are not of the codec a 400. */
export function decompressBounded(codec: Codec, bytes: Buffer, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    CODECS[codec](bytes, { maxOutputLength: maxBytes }, (error, output) => {
      if (!error) return resolve(output)
      if (error instanceof RangeError && (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        return reject(overDecodedLimit(maxBytes))
      }
      reject(
        httpError(
          `invalid_${codec === 'br' ? 'brotli' : codec}`,
          `invalid ${codec === 'br' ? 'Brotli' : codec.toUpperCase()} data: ${error.message}`,
        ),
      )
    })
  })
}

async function inflateLz64(text: string, maxBytes: number): Promise<string> {
  const result = await decompressLz64(text, maxBytes)
  if (!result.ok) {
    if (result.reason === 'too_large') throw overDecodedLimit(maxBytes)
    throw httpError('invalid_lz64', 'invalid lz64 (lz-string) data')
  }
  if (LONE_SURROGATE.test(result.text)) {
    throw httpError('invalid_lz64', 'lz64 data decompresses to text that is not valid Unicode')
  }
  if (Buffer.byteLength(result.text, 'utf8') > maxBytes) throw overDecodedLimit(maxBytes)
  return result.text
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function utf8(bytes: Buffer): string {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    throw httpError('invalid_utf8', 'invalid UTF8 in request payload')
  }
}

function overDecodedLimit(maxBytes: number): HttpError {
  return httpError('payload_too_large', `decoded request payload is over the limit of ${maxBytes} bytes`)
}
