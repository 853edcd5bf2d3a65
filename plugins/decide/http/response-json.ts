/**
 * The JSON text of a /flags or /decide answer: exactly `JSON.stringify` of the object
 * responses.ts builds, but for the per-flag shapes (v2, v3) the record text of each answer the
 * evaluator shares between requests (evaluate.ts: one frozen answer per flag outcome and
 * definitions version) is made once. Serialising 50 records per request was a tenth of a flags
 * request's CPU. `flagsResponseBuffer` also keeps each shared record's UTF-8 bytes and copies
 * them into the answer: encoding the ~12 KB text of 50 records anew was most of what was left.
 */
import type { EvaluationResult, FlagResult } from '../evaluator/index.ts'
import { flagRecord, flagsResponse } from './responses.ts'
import type { FlagsBodyParts, ResponseShape } from './responses.ts'

/** Record texts of the answers the evaluator shares between requests (frozen ones), kept as long as the answer. */
const texts = { v2: new WeakMap<FlagResult, string>(), v3: new WeakMap<FlagResult, string>() }

/** `"key":{record}`, remembered for a shared answer. */
function recordText(shape: 'v2' | 'v3', flag: FlagResult): string {
  const known = texts[shape]
  let text = known.get(flag)
  if (text === undefined) {
    text = `${JSON.stringify(flag.key)}:${JSON.stringify(flagRecord(shape, flag))}`
    if (Object.isFrozen(flag)) known.set(flag, text)
  }
  return text
}

/** `,"key":{record}` in UTF-8, remembered for a shared answer. */
const bytes = { v2: new WeakMap<FlagResult, Buffer>(), v3: new WeakMap<FlagResult, Buffer>() }

function recordBytes(shape: 'v2' | 'v3', flag: FlagResult): Buffer {
  const known = bytes[shape]
  let buffer = known.get(flag)
  if (buffer === undefined) {
    buffer = Buffer.from(`,${recordText(shape, flag)}`)
    if (Object.isFrozen(flag)) known.set(flag, buffer)
  }
  return buffer
}

const HEADS = {
  true: Buffer.from('{"errorsWhileComputingFlags":true,"flags":{'),
  false: Buffer.from('{"errorsWhileComputingFlags":false,"flags":{'),
}

/** `Buffer.from(flagsResponseJson(...))`, from the shared records' bytes where it can. */
export function flagsResponseBuffer(
  fields: Record<string, unknown>,
  shape: ResponseShape,
  result: EvaluationResult,
  parts: FlagsBodyParts,
): Buffer {
  if (shape !== 'v2' && shape !== 'v3') return Buffer.from(flagsResponseJson(fields, shape, result, parts))
  // with fields (posthog-js asks /flags?v=2&config=true, /decide adds its own) only their text is made per request
  let head: Buffer
  let tail: Buffer
  if (isEmpty(fields)) {
    head = HEADS[`${result.errorsWhileComputingFlags}`]
    tail = Buffer.from(`}${partsText(parts)}}`)
  } else {
    const [before, after] = aroundRecords(fields, result, parts)
    head = Buffer.from(`${before}{`)
    tail = Buffer.from(`}${after}`)
  }
  const pieces: Buffer[] = [head]
  let length = head.length
  for (const answer of result.answers) {
    // the first record goes without its leading comma
    const record = pieces.length === 1 ? recordBytes(shape, answer).subarray(1) : recordBytes(shape, answer)
    pieces.push(record)
    length += record.length
  }
  pieces.push(tail)
  return Buffer.concat(pieces, length + tail.length)
}

const FLAGS_PLACEHOLDER = 'hedgerow:flags-records'

/**
 * The response's text before and after its `flags` object when `fields` come first: JSON.stringify
 * places a field named like a later member where the field is, and integer-like names first.
 */
function aroundRecords(
  fields: Record<string, unknown>,
  result: EvaluationResult,
  parts: FlagsBodyParts,
): [string, string] {
  const text = JSON.stringify({
    ...fields,
    errorsWhileComputingFlags: result.errorsWhileComputingFlags,
    flags: FLAGS_PLACEHOLDER,
    ...parts,
  })
  // only the request id and time can follow the records, so the last placeholder is the records' own
  const at = text.lastIndexOf(`"${FLAGS_PLACEHOLDER}"`)
  return [text.slice(0, at), text.slice(at + FLAGS_PLACEHOLDER.length + 2)]
}

/** `JSON.stringify({...fields, ...flagsResponse(shape, result, parts)})`. */
export function flagsResponseJson(
  fields: Record<string, unknown>,
  shape: ResponseShape,
  result: EvaluationResult,
  parts: FlagsBodyParts,
): string {
  if (shape !== 'v2' && shape !== 'v3') return JSON.stringify({ ...fields, ...flagsResponse(shape, result, parts) })
  // the answers come in the order JSON.stringify of the records object would write them
  let records = ''
  for (const answer of result.answers)
    records += records === '' ? recordText(shape, answer) : `,${recordText(shape, answer)}`
  if (isEmpty(fields))
    return `{"errorsWhileComputingFlags":${result.errorsWhileComputingFlags},"flags":{${records}}${partsText(parts)}}`
  const [before, after] = aroundRecords(fields, result, parts)
  return `${before}{${records}}${after}`
}

function isEmpty(fields: Record<string, unknown>): boolean {
  for (const _ in fields) return false
  return true
}

/** `,"requestId":…,"evaluatedAt":…`, the members JSON.stringify writes for the parts, named rather than enumerated. */
function partsText(parts: FlagsBodyParts): string {
  return `,"requestId":${JSON.stringify(parts.requestId)},"evaluatedAt":${JSON.stringify(parts.evaluatedAt)}`
}
