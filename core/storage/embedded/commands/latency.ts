/**
 * Operation latencies as MongoDB keeps them: serverStatus `opLatencies` (server-wide) and the
 * `$collStats: {latencyStats: {histograms: true}}` stage (per collection), each split into reads,
 * writes, commands and transactions, each a total in microseconds, a count and a histogram with
 * MongoDB's buckets (operation_latency_histogram.cpp). A command's latency runs from the moment the
 * server has its whole message to the reply being handed to the socket (server.ts), so it holds
 * the store's time, the hops between threads and any pause of the thread holding the connections,
 * and not the network or the client.
 *
 * The thread holding the connections records every command, whichever thread answered it; the
 * numbers live in a SharedArrayBuffer that every command thread reads (serverStatus runs on the
 * writer, $collStats on a reader), so one thread writes and the others only read.
 */
import { Long } from 'bson'
import type { Doc } from '../bson/codec.ts'
import { HEADER_SIZE, OpCode, peekCommandName } from '../wire/messages.ts'

/** MongoDB's bucket lower bounds (µs): powers of two, with half steps from 2048 µs to 2^21 µs. */
export const LATENCY_BUCKETS: readonly number[] = (() => {
  const bounds = [0]
  for (let log2 = 1; log2 < 11; log2++) bounds.push(2 ** log2)
  for (let log2 = 11; log2 < 21; log2++) bounds.push(2 ** log2, 3 * 2 ** (log2 - 1))
  for (let log2 = 21; log2 <= 40; log2++) bounds.push(2 ** log2)
  return bounds
})()

/** The bucket of a latency (whole µs), as MongoDB's _getBucket picks it. */
export function bucketOf(micros: number): number {
  if (micros < 2) return 0
  const log2 = Math.floor(Math.log2(micros))
  if (log2 < 11) return log2
  if (log2 < 21) return log2 + (log2 - 11) + (micros >= 3 * 2 ** (log2 - 1) ? 1 : 0)
  return Math.min(log2 + 10, LATENCY_BUCKETS.length - 1)
}

export const LATENCY_KINDS = ['reads', 'writes', 'commands', 'transactions'] as const
type Kind = 0 | 1 | 2 | 3

/** MongoDB's read/write type of each command (Command::getReadWriteType); the rest are commands. */
const KIND_OF = new Map<string, Kind>([
  ['find', 0],
  ['getMore', 0],
  ['count', 0],
  ['distinct', 0],
  ['aggregate', 0],
  ['insert', 1],
  ['update', 1],
  ['delete', 1],
  ['findAndModify', 1],
  ['commitTransaction', 3],
  ['abortTransaction', 3],
])

/** Commands on one collection, named by the command's first field (getMore: by `collection`). */
const ON_COLLECTION = new Set([
  'find',
  'getMore',
  'count',
  'distinct',
  'aggregate',
  'insert',
  'update',
  'delete',
  'findAndModify',
  'create',
  'drop',
  'createIndexes',
  'dropIndexes',
  'listIndexes',
  'collMod',
  'collStats',
  'killCursors',
])

// one histogram: total µs, count, then the buckets
const HISTOGRAM = 2 + LATENCY_BUCKETS.length
const SLOT = LATENCY_KINDS.length * HISTOGRAM
/** Collections tracked at once; beyond, the least recently used one's figures are dropped. */
const COLLECTIONS = 256
/** Bytes kept per collection name: a 2-byte length and the name (MongoDB's namespaces are at most 255). */
const NAME_BYTES = 256
const NUMBERS_BYTES = Float64Array.BYTES_PER_ELEMENT * SLOT * (1 + COLLECTIONS)

let shared: SharedArrayBuffer | undefined
let numbers: Float64Array
let names: Uint8Array

/** The table this process's threads share: made by the first thread to ask, handed to the others. */
export function latencyTable(adopt?: SharedArrayBuffer): SharedArrayBuffer {
  if (adopt) shared = adopt
  shared ??= new SharedArrayBuffer(NUMBERS_BYTES + NAME_BYTES * COLLECTIONS)
  numbers = new Float64Array(shared, 0, SLOT * (1 + COLLECTIONS))
  names = new Uint8Array(shared, NUMBERS_BYTES, NAME_BYTES * COLLECTIONS)
  return shared
}

const utf8 = new TextEncoder()
const textOf = new TextDecoder()

function nameAt(slot: number): string | undefined {
  const at = (slot - 1) * NAME_BYTES
  const length = names[at] | (names[at + 1] << 8)
  return length === 0 ? undefined : textOf.decode(names.subarray(at + 2, at + 2 + length))
}

/** The recording thread's side: which slot holds which collection, and when each was last used. */
const slots = new Map<string, number>()
const lastUsed = new Float64Array(1 + COLLECTIONS)
let clock = 0

function forget(ns: string): void {
  const slot = slots.get(ns)
  if (slot === undefined) return
  slots.delete(ns)
  names[(slot - 1) * NAME_BYTES] = 0
  names[(slot - 1) * NAME_BYTES + 1] = 0
  numbers.fill(0, slot * SLOT, (slot + 1) * SLOT)
  lastUsed[slot] = 0
}

function slotFor(ns: string): number | undefined {
  let slot = slots.get(ns)
  if (slot !== undefined) return slot
  const bytes = utf8.encode(ns)
  if (bytes.length > NAME_BYTES - 2) return undefined
  slot = 1
  for (let s = 1; s <= COLLECTIONS; s++) {
    if (lastUsed[s] === 0) {
      slot = s
      break
    }
    if (lastUsed[s] < lastUsed[slot]) slot = s
  }
  const old = nameAt(slot)
  if (old !== undefined) forget(old)
  const at = (slot - 1) * NAME_BYTES
  names.set(bytes, at + 2)
  names[at + 1] = bytes.length >> 8
  names[at] = bytes.length & 0xff
  slots.set(ns, slot)
  return slot
}

function add(slot: number, kind: Kind, micros: number, bucket: number): void {
  const at = slot * SLOT + kind * HISTOGRAM
  numbers[at] += micros
  numbers[at + 1] += 1
  numbers[at + 2 + bucket] += 1
}

/**
 * The string value of top-level field `field` of the BSON document at `offset`, read in place;
 * undefined when the bytes are not a well-formed document (the dispatcher answers those).
 */
function stringField(frame: Buffer, offset: number, field: string): string | undefined {
  try {
    return findString(frame, offset, field)
  } catch {
    return undefined // read past the end of a malformed frame
  }
}

function findString(frame: Buffer, offset: number, field: string): string | undefined {
  if (offset + 4 > frame.length) return undefined
  const end = Math.min(offset + frame.readInt32LE(offset) - 1, frame.length - 1)
  let at = offset + 4
  while (at < end) {
    const type = frame[at]
    const nameEnd = frame.indexOf(0, at + 1)
    if (nameEnd < 0 || nameEnd >= end) return undefined
    const value = nameEnd + 1
    let size: number
    if (type === 0x02 || type === 0x0d || type === 0x0e) size = 4 + frame.readInt32LE(value)
    else if (type === 0x03 || type === 0x04) size = frame.readInt32LE(value)
    else if (type === 0x01 || type === 0x09 || type === 0x11 || type === 0x12) size = 8
    else if (type === 0x10) size = 4
    else if (type === 0x08) size = 1
    else if (type === 0x07) size = 12
    else if (type === 0x05) size = 5 + frame.readInt32LE(value)
    else if (type === 0x0a || type === 0x06 || type === 0x7f || type === 0xff) size = 0
    else return undefined // rarer types never come before the fields looked for here
    if (size < 0 || value + size > end) return undefined
    if (type === 0x02 && frame.toString('latin1', at + 1, nameEnd) === field)
      return frame.toString('utf8', value + 4, value + size - 1)
    at = value + size
  }
  return undefined
}

/** The collection an OP_MSG command acts on (`<db>.<collection>`), if it names one. */
function namespaceOf(frame: Buffer, name: string): string | undefined {
  if (!ON_COLLECTION.has(name)) return undefined
  const body = HEADER_SIZE + 5
  const collection = stringField(frame, body, name === 'getMore' ? 'collection' : name)
  const db = collection === undefined ? undefined : stringField(frame, body, '$db')
  return db === undefined ? undefined : `${db}.${collection}`
}

/**
 * Records one command's latency: `frame` is the message as received, `micros` how long the server
 * took from having it whole to handing over the reply. Called only on the thread holding the
 * connections.
 */
export function recordLatency(frame: Buffer, micros: number): void {
  if (!shared) latencyTable()
  const whole = Math.max(0, Math.round(micros))
  const bucket = bucketOf(whole)
  const name = frame.readInt32LE(12) === OpCode.msg ? peekCommandName(frame) : undefined
  const kind = (name === undefined ? undefined : KIND_OF.get(name)) ?? 2
  add(0, kind, whole, bucket)
  if (name === undefined) return
  const ns = namespaceOf(frame, name)
  if (name === 'dropDatabase') {
    const db = stringField(frame, HEADER_SIZE + 5, '$db')
    for (const known of [...slots.keys()]) if (known.startsWith(`${db}.`)) forget(known)
  } else if (name === 'renameCollection') {
    const from = stringField(frame, HEADER_SIZE + 5, 'renameCollection')
    if (from !== undefined) forget(from)
  }
  if (ns === undefined) return
  // MongoDB forgets a dropped collection's figures: a collection made again starts from zero
  if (name === 'drop') return forget(ns)
  const slot = slotFor(ns)
  if (slot === undefined) return
  lastUsed[slot] = ++clock
  add(slot, kind, whole, bucket)
}

/** `slot` undefined: a collection with nothing recorded, all zeros. */
function histogramDoc(slot: number | undefined, kind: number, histograms: boolean): Doc {
  const at = (slot ?? 0) * SLOT + kind * HISTOGRAM
  const value = (offset: number) => (slot === undefined ? 0 : numbers[at + offset])
  const out: Doc = {}
  if (histograms) {
    const entries: Doc[] = []
    for (let b = 0; b < LATENCY_BUCKETS.length; b++) {
      const count = value(2 + b)
      if (count > 0) entries.push({ micros: Long.fromNumber(LATENCY_BUCKETS[b]), count: Long.fromNumber(count) })
    }
    out.histogram = entries
  }
  out.latency = Long.fromNumber(value(0))
  out.ops = Long.fromNumber(value(1))
  return out
}

function latencyDoc(slot: number | undefined, histograms: boolean): Doc {
  return Object.fromEntries(LATENCY_KINDS.map((kind, i) => [kind, histogramDoc(slot, i, histograms)]))
}

/** serverStatus's `opLatencies` (`histograms`: as asked by `{opLatencies: {histograms: true}}`). */
export function opLatencies(histograms: boolean): Doc {
  if (!shared) latencyTable()
  return latencyDoc(0, histograms)
}

/** `$collStats`'s `latencyStats` of collection `ns` (zeros when it has none recorded). */
export function collectionLatencies(ns: string, histograms: boolean): Doc {
  if (!shared) latencyTable()
  for (let slot = 1; slot <= COLLECTIONS; slot++) if (nameAt(slot) === ns) return latencyDoc(slot, histograms)
  return latencyDoc(undefined, histograms)
}
