import { isUtf8 } from 'node:buffer'
import { int32 } from './raw.ts'

/**
 * A check that bytes hold one well-formed BSON document, without decoding it. Inserted documents
 * are stored as the client sent them and decoded only in part (the fields indexes read), so this
 * refuses what decoding them in full would refuse (js-bson's deserialize): lengths that run past
 * their container, containers not closed where their length says, unknown element types, strings
 * without their terminator or with invalid UTF-8, booleans other than 0 and 1, inconsistent binary
 * and code-with-scope lengths. A document that passes can be decoded later by every reader.
 */
export class InvalidBsonError extends Error {}

function invalid(what: string): never {
  throw new InvalidBsonError(`invalid BSON document: ${what}`)
}

/** Most strings are ASCII: the native UTF-8 check only runs on those that are not. */
function checkUtf8(bytes: Uint8Array, start: number, end: number): void {
  for (let i = start; i < end; i++) {
    if (bytes[i] < 0x80) continue
    if (!isUtf8(bytes.subarray(start, end))) invalid('a string is not valid UTF-8')
    return
  }
}

/** The end of a string-like value (int32 size, bytes, NUL) at `at`, within `limit`. */
function stringEnd(bytes: Uint8Array, at: number, limit: number): number {
  if (at + 4 > limit) invalid('a string runs past the end of its document')
  const size = int32(bytes, at)
  const end = at + 4 + size
  if (size <= 0 || end > limit || bytes[end - 1] !== 0) invalid('bad string length')
  checkUtf8(bytes, at + 4, end - 1)
  return end
}

function cstringEnd(bytes: Uint8Array, at: number, limit: number): number {
  let i = at
  while (i < limit && bytes[i] !== 0) i++
  if (i >= limit) invalid('a field name or regex runs past the end of its document')
  return i
}

/** The end of a code-with-scope value at `at`: its sizes must agree, and its scope is a document. */
function codeWithScopeEnd(bytes: Uint8Array, at: number, limit: number): number {
  if (at + 4 > limit) invalid('code with scope runs past the end of its document')
  const total = int32(bytes, at)
  if (total < 14 || at + total > limit) invalid('bad code with scope length')
  const scope = stringEnd(bytes, at + 4, at + total)
  const scopeSize = int32(bytes, scope)
  if (scope + scopeSize !== at + total) invalid('bad code with scope length')
  checkBsonDocument(bytes.subarray(scope, scope + scopeSize))
  return at + total
}

function binaryEnd(bytes: Uint8Array, at: number, limit: number): number {
  if (at + 5 > limit) invalid('a binary runs past the end of its document')
  const size = int32(bytes, at)
  if (size < 0) invalid('negative binary length')
  // the old binary subtype repeats the length inside
  if (bytes[at + 4] === 0x02 && (size < 4 || int32(bytes, at + 5) !== size - 4)) invalid('bad binary length')
  return at + 5 + size
}

/**
 * Throws InvalidBsonError unless `bytes` is exactly one well-formed document. Returns how deep its
 * elements nest, as depth.ts counts (top-level fields are level 1; an empty object or array adds
 * no level). Iterative: no stack to overflow however deep the document.
 */
export function checkBsonDocument(bytes: Uint8Array): number {
  if (bytes.length < 5 || int32(bytes, 0) !== bytes.length) invalid('its length is not its size')
  // offsets of the terminating zero of each container being walked, outermost first
  const ends: number[] = [bytes.length - 1]
  let depth = 1
  let at = 4
  while (ends.length > 0) {
    const end = ends[ends.length - 1]
    if (at === end) {
      if (bytes[at] !== 0) invalid('a document is not terminated by a zero byte')
      ends.pop()
      at += 1
      continue
    }
    const type = bytes[at]
    if (type === 0) invalid('a document ends before its stated length')
    const value = cstringEnd(bytes, at + 1, end) + 1
    let next: number
    switch (type) {
      case 0x01:
      case 0x09:
      case 0x11:
      case 0x12:
        next = value + 8
        break
      case 0x10:
        next = value + 4
        break
      case 0x07:
        next = value + 12
        break
      case 0x13:
        next = value + 16
        break
      case 0x08:
        if (bytes[value] !== 0 && bytes[value] !== 1) invalid('a boolean is neither 0 nor 1')
        next = value + 1
        break
      case 0x06:
      case 0x0a:
      case 0x7f:
      case 0xff:
        next = value
        break
      case 0x02:
      case 0x0d:
      case 0x0e:
        next = stringEnd(bytes, value, end)
        break
      case 0x0c:
        next = stringEnd(bytes, value, end) + 12
        break
      case 0x05:
        next = binaryEnd(bytes, value, end)
        break
      case 0x0b:
        next = cstringEnd(bytes, cstringEnd(bytes, value, end) + 1, end) + 1
        break
      case 0x0f:
        next = codeWithScopeEnd(bytes, value, end)
        break
      case 0x03:
      case 0x04: {
        if (value + 4 > end) invalid('an embedded document runs past the end of its document')
        const size = int32(bytes, value)
        if (size < 5 || value + size > end) invalid('bad embedded document length')
        if (size > 5) {
          ends.push(value + size - 1)
          if (ends.length > depth) depth = ends.length
          at = value + 4
          continue
        }
        if (bytes[value + 4] !== 0) invalid('a document is not terminated by a zero byte')
        next = value + 5
        break
      }
      default:
        invalid(`unknown element type 0x${type.toString(16)}`)
    }
    if (next > end) invalid('an element runs past the end of its document')
    at = next
  }
  return depth
}
