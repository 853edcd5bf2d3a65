import { decode, type Doc } from '../bson/codec.ts'
import { documentLength } from '../bson/raw.ts'
import { checkBsonDocument, InvalidBsonError } from '../bson/validate.ts'

/**
 * The MongoDB wire protocol messages the embedded server speaks: OP_MSG (every modern command)
 * and the legacy OP_QUERY/OP_REPLY pair drivers still use for the first handshake.
 * https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
 */
export const OpCode = { reply: 1, query: 2004, compressed: 2012, msg: 2013 } as const

export const MsgFlag = { checksumPresent: 1, moreToCome: 2, exhaustAllowed: 1 << 16 } as const

export const HEADER_SIZE = 16
/** What hello advertises as maxMessageSizeBytes; larger frames are refused. */
export const MAX_MESSAGE_SIZE = 48_000_000

export interface Header {
  length: number
  requestId: number
  responseTo: number
  opCode: number
}

export function readHeader(frame: Buffer): Header {
  return {
    length: frame.readInt32LE(0),
    requestId: frame.readInt32LE(4),
    responseTo: frame.readInt32LE(8),
    opCode: frame.readInt32LE(12),
  }
}

/** A command as received: the decoded body (sequences merged in) plus raw bytes for exact types. */
export interface IncomingCommand {
  body: Doc
  raw: Uint8Array
  /** Raw documents of OP_MSG document sequences (kind 1 sections), by identifier. */
  sequences: Map<string, Uint8Array[]>
  /** The client asked for no reply (moreToCome): an unacknowledged write. */
  noReply: boolean
  /** Arrived as OP_QUERY: answer with OP_REPLY. */
  legacy: boolean
}

export class ProtocolError extends Error {}

/**
 * An insert's documents are stored as sent and read in part (commands/writes.ts): they are checked
 * to be well-formed here, as decoding them would, and decoded only if something reads the field.
 */
const LAZY_SEQUENCE = 'documents'

function decodeWhenRead(body: Doc, id: string, docs: Uint8Array[]): void {
  for (const doc of docs) {
    try {
      checkBsonDocument(doc)
    } catch (error) {
      if (error instanceof InvalidBsonError)
        throw new ProtocolError(`OP_MSG document sequence '${id}': ${error.message}`)
      throw error
    }
  }
  let decoded: Doc[] | undefined
  Object.defineProperty(body, id, {
    enumerable: true,
    configurable: true,
    get: () => {
      decoded ??= docs.map((d) => decode(d))
      return decoded
    },
    set: (value: Doc[]) => {
      decoded = value
    },
  })
}

export function parseOpMsg(frame: Buffer): IncomingCommand {
  const flags = frame.readUInt32LE(HEADER_SIZE)
  const end = frame.length - (flags & MsgFlag.checksumPresent ? 4 : 0)
  let at = HEADER_SIZE + 4
  let raw: Uint8Array | undefined
  const sequences = new Map<string, Uint8Array[]>()
  while (at < end) {
    const kind = frame[at++]
    if (kind === 0) {
      const size = documentLength(frame, at)
      raw = frame.subarray(at, at + size)
      at += size
    } else if (kind === 1) {
      const size = frame.readInt32LE(at)
      const stop = at + size
      const nameEnd = frame.indexOf(0, at + 4)
      if (nameEnd < 0 || nameEnd >= stop) throw new ProtocolError('malformed OP_MSG document sequence')
      const id = frame.toString('utf8', at + 4, nameEnd)
      const docs: Uint8Array[] = []
      for (let p = nameEnd + 1; p < stop; ) {
        const len = documentLength(frame, p)
        if (len < 5 || p + len > stop) throw new ProtocolError('malformed document in OP_MSG sequence')
        docs.push(frame.subarray(p, p + len))
        p += len
      }
      sequences.set(id, docs)
      at = stop
    } else {
      throw new ProtocolError(`unknown OP_MSG section kind ${kind}`)
    }
  }
  if (!raw) throw new ProtocolError('OP_MSG without a body section')
  const body = decode(raw)
  for (const [id, docs] of sequences) {
    if (id === LAZY_SEQUENCE) decodeWhenRead(body, id, docs)
    else body[id] = docs.map((d) => decode(d))
  }
  return { body, raw, sequences, noReply: (flags & MsgFlag.moreToCome) !== 0, legacy: false }
}

/** OP_QUERY on `<db>.$cmd`: the legacy way to run a command (the driver's first hello). */
export function parseOpQuery(frame: Buffer): IncomingCommand {
  let at = HEADER_SIZE + 4
  const nameEnd = frame.indexOf(0, at)
  const namespace = frame.toString('utf8', at, nameEnd)
  at = nameEnd + 1 + 8
  const size = documentLength(frame, at)
  const raw = frame.subarray(at, at + size)
  const query = decode(raw)
  const wrapped = query.$query ?? query.query
  const body = (typeof wrapped === 'object' && wrapped !== null ? wrapped : query) as Doc
  const db = namespace.endsWith('.$cmd') ? namespace.slice(0, -5) : namespace.split('.')[0]
  if (body.$db === undefined) body.$db = db
  return { body, raw, sequences: new Map(), noReply: false, legacy: true }
}

/** Parses a command message of either kind (OP_MSG, or OP_QUERY for a driver's first hello). */
export function parseFrame(frame: Buffer): IncomingCommand {
  const opCode = frame.readInt32LE(12)
  if (opCode === OpCode.msg) return parseOpMsg(frame)
  if (opCode === OpCode.query) return parseOpQuery(frame)
  throw new ProtocolError(`unsupported wire protocol opCode ${opCode} (compression is not offered)`)
}

/** Whether the client expects no reply (an OP_MSG with moreToCome: an unacknowledged write). */
export function expectsNoReply(frame: Buffer): boolean {
  return frame.readInt32LE(12) === OpCode.msg && (frame.readUInt32LE(HEADER_SIZE) & MsgFlag.moreToCome) !== 0
}

/**
 * The command's name (the first field of the body) read from the bytes, without decoding the
 * command: undefined unless the frame is an OP_MSG whose first section is the body.
 */
export function peekCommandName(frame: Buffer): string | undefined {
  if (frame.length < HEADER_SIZE + 11 || frame.readInt32LE(12) !== OpCode.msg) return undefined
  const at = HEADER_SIZE + 4
  // a body section first, holding at least one field
  if (frame[at] !== 0 || frame[at + 5] === 0) return undefined
  const nameStart = at + 1 + 4 + 1
  const nameEnd = frame.indexOf(0, nameStart)
  return nameEnd < 0 ? undefined : frame.toString('utf8', nameStart, nameEnd)
}

let nextRequestId = 1

function header(length: number, responseTo: number, opCode: number): Buffer {
  const h = Buffer.allocUnsafe(HEADER_SIZE)
  h.writeInt32LE(length, 0)
  h.writeInt32LE(nextRequestId++ & 0x7fffffff, 4)
  h.writeInt32LE(responseTo, 8)
  h.writeInt32LE(opCode, 12)
  return h
}

/** An OP_MSG reply carrying one body document (already encoded). */
export function opMsgReply(responseTo: number, body: Uint8Array): Buffer[] {
  const prefix = Buffer.from([0, 0, 0, 0, 0])
  return [
    header(HEADER_SIZE + prefix.length + body.length, responseTo, OpCode.msg),
    prefix,
    Buffer.from(body.buffer, body.byteOffset, body.byteLength),
  ]
}

export function opReply(responseTo: number, body: Uint8Array): Buffer[] {
  const fields = Buffer.alloc(20)
  fields.writeInt32LE(1, 16)
  return [
    header(HEADER_SIZE + fields.length + body.length, responseTo, OpCode.reply),
    fields,
    Buffer.from(body.buffer, body.byteOffset, body.byteLength),
  ]
}
