/**
 * MongoDB's nesting limit for stored documents. The server accepts BSON nested up to maxBSONDepth
 * (200) but stores user documents only up to 20 levels less, 180 (bson_depth.h:
 * kDefaultMaxAllowableDepth - kExtraSystemDepthLevels); the documented "100 levels" is what it
 * supports, not where it refuses. Top-level fields are level 1, and an empty object or array adds
 * no level. Inserts are refused in insert.cpp's validateDepth, updates and upserts in
 * storage_validation.cpp, both with code 15 (Overflow) and these messages.
 */
import { documentLength, valueLength } from '../bson/raw.ts'
import { MongoServerError } from '../errors.ts'

export const MAX_USER_STORAGE_DEPTH = 180
const OVERFLOW = 15
/** `extra` puts the code name in the reply and in write errors, as MongoDB does. */
const overflow = (message: string) => new MongoServerError(OVERFLOW, message, { codeName: 'Overflow' })

/** Each enclosing level costs at least 7 bytes (type, empty name, length, terminator): smaller documents cannot be too deep. */
const MIN_BYTES_PER_LEVEL = 7

/** True when some element of the raw BSON document sits deeper than `max` levels. Iterative: no stack to overflow. */
export function exceedsStorageDepth(bytes: Uint8Array, max = MAX_USER_STORAGE_DEPTH): boolean {
  if (bytes.length < MIN_BYTES_PER_LEVEL * max) return false
  // Offsets of the terminating zero of each container being walked, outermost first.
  const ends: number[] = [documentLength(bytes) - 1]
  let at = 4
  while (ends.length > 0) {
    const end = ends[ends.length - 1]!
    if (at >= end) {
      ends.pop()
      at = end + 1
      continue
    }
    const type = bytes[at]!
    let valueStart = at + 1
    while (bytes[valueStart] !== 0) valueStart++
    valueStart++
    if (type === 0x03 || type === 0x04) {
      const length = documentLength(bytes, valueStart)
      if (length > 5) {
        // The container's elements would sit one level below the current depth.
        if (ends.length >= max) return true
        ends.push(valueStart + length - 1)
        at = valueStart + 4
        continue
      }
    }
    at = valueStart + valueLength(bytes, type, valueStart, bytes.length)
  }
  return false
}

export function checkInsertDepth(bytes: Uint8Array): void {
  if (exceedsStorageDepth(bytes)) {
    throw overflow(`cannot insert document because it exceeds ${MAX_USER_STORAGE_DEPTH} levels of nesting`)
  }
}

/** For the document an update or upsert produces. */
export function checkUpdatedDepth(bytes: Uint8Array): void {
  if (exceedsStorageDepth(bytes)) {
    throw overflow(`Document exceeds maximum nesting depth of ${MAX_USER_STORAGE_DEPTH}`)
  }
}
