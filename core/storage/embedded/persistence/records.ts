import { closeSync, openSync, readSync } from 'node:fs'
import { crc32 } from 'node:zlib'

/**
 * The unit of the write-ahead log and of snapshots:
 *
 *   u32 payload length | u32 CRC-32 of the payload | payload
 *   payload = u8 op | u16 namespace length | namespace (UTF-8) | body (BSON, may be empty)
 *
 * A record is only trusted if its length fits the file and its checksum matches; the first
 * record that fails either check ends a log (a torn write at the moment of a crash).
 */
export const RecordOp = {
  /** Document stored (insert, update or replace): body = the whole document. */
  put: 1,
  /** Document removed: body = {_id}. */
  delete: 2,
  /** Collection created: body = {uuid, options}. */
  createCollection: 3,
  dropCollection: 4,
  /** Index created: body = the index spec. */
  createIndex: 5,
  /** Index dropped: body = {name}. */
  dropIndex: 6,
  /** Database dropped: namespace = the database name. */
  dropDatabase: 7,
  /** Collection renamed: namespace = the source, body = {to}. */
  rename: 8,
  /** Last record of a complete snapshot. */
  end: 9,
  /** The lmdb engine's journal (lmdb/journal.ts): body = one transaction's puts and removes (lmdb/commit-ops.ts). */
  lmdbCommit: 10,
} as const

export type RecordOpCode = (typeof RecordOp)[keyof typeof RecordOp]

export interface LogRecord {
  op: number
  ns: string
  body: Uint8Array
}

const HEADER = 8
const EMPTY = new Uint8Array(0)

export function encodeRecord(op: RecordOpCode, ns: string, body: Uint8Array = EMPTY): Buffer {
  const nsBytes = Buffer.from(ns, 'utf8')
  const payloadLength = 1 + 2 + nsBytes.length + body.length
  const out = Buffer.allocUnsafe(HEADER + payloadLength)
  out.writeUInt32LE(payloadLength, 0)
  out[HEADER] = op
  out.writeUInt16LE(nsBytes.length, HEADER + 1)
  nsBytes.copy(out, HEADER + 3)
  out.set(body, HEADER + 3 + nsBytes.length)
  out.writeUInt32LE(crc32(out.subarray(HEADER)), 4)
  return out
}

export interface DecodeResult {
  records: LogRecord[]
  /** Bytes of valid records; anything after is a torn or corrupt tail. */
  validLength: number
}

/** Reads records from the start of `data` until the end or the first invalid one. */
export function decodeRecords(data: Buffer): DecodeResult {
  const records: LogRecord[] = []
  let at = 0
  while (at + HEADER <= data.length) {
    const length = data.readUInt32LE(at)
    if (length < 3 || at + HEADER + length > data.length) break
    const payload = data.subarray(at + HEADER, at + HEADER + length)
    if (crc32(payload) !== data.readUInt32LE(at + 4)) break
    const nsLength = payload.readUInt16LE(1)
    if (3 + nsLength > payload.length) break
    records.push({
      op: payload[0],
      ns: payload.toString('utf8', 3, 3 + nsLength),
      body: payload.subarray(3 + nsLength),
    })
    at += HEADER + length
  }
  return { records, validLength: at }
}

const CHUNK = 16 * 1024 * 1024

/**
 * Streams the records of a file (recovery reads logs and snapshots larger than memory would
 * like as one buffer). Returns the length of the valid prefix.
 */
export function readRecordFile(path: string, onRecord: (record: LogRecord) => void): number {
  const fd = openSync(path, 'r')
  try {
    let carry = Buffer.alloc(0)
    let consumed = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.max(CHUNK, carry.length + HEADER))
      const read = readSync(fd, chunk, 0, chunk.length, null)
      const data = carry.length ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read)
      const { records, validLength } = decodeRecords(data)
      for (const record of records) onRecord(record)
      consumed += validLength
      carry = Buffer.from(data.subarray(validLength))
      if (read === 0) return consumed
      // A record can only be incomplete here if more data follows; a long carry means corruption.
      if (carry.length > 64 * 1024 * 1024) return consumed
    }
  } finally {
    closeSync(fd)
  }
}
