import type { Doc } from '../bson/codec.ts'
import type { CursorRegistry, CursorSource } from '../cursors.ts'
import type { Catalog } from '../engine/catalog.ts'
import type { Collection } from '../engine/collection.ts'
import type { SecondaryIndex } from '../engine/secondary-index.ts'
import { rawItems } from '../bson/raw.ts'
import { mongoError } from '../errors.ts'
import type { IncomingCommand } from '../wire/messages.ts'

export interface ServerInfo {
  /** How clients reach it: the socket path, or host:port when it listens on TCP too. */
  address: string
  /** The TCP port, when it listens on TCP. */
  tcpPort?: number
  replSetName?: string
  startedAt: Date
}

/** Change streams, available when the server answers as a replica set. */
export interface ChangeStreams {
  open(db: string, collection: string | undefined, pipeline: Doc[]): CursorSource
}

/** Server settings a client may read or change at run time (setParameter). */
export interface Parameters {
  ttlMonitorSleepSecs: number
}

/** Index builds beside other commands (index-builds.ts). */
export interface IndexBuildRunner {
  start(coll: Collection, indexes: SecondaryIndex[]): Promise<void>
  wait(index: SecondaryIndex): Promise<void>
}

export interface CommandContext {
  catalog: Catalog
  cursors: CursorRegistry
  info: ServerInfo
  changeStreams?: ChangeStreams
  parameters: Parameters
  connectionId: number
  /** Forces the log to disk now (the fsync command). */
  syncLog(): Promise<void>
  /** Compacts the log into a snapshot now (the compact command). */
  compactLog(): Promise<void>
  indexBuilds: IndexBuildRunner
  /** What the reply waits for once the command's own transaction is committed (index builds). */
  after: Array<Promise<void>>
}

/** A reply document, or a reply already encoded (cursor replies splice stored bytes). */
export type Reply = Doc | Buffer

export type CommandHandler = (cmd: IncomingCommand, ctx: CommandContext) => Reply | Promise<Reply>

export function dbOf(cmd: IncomingCommand): string {
  const db = cmd.body.$db
  if (typeof db !== 'string' || db === '') throw mongoError('InvalidNamespace', 'the command has no $db field')
  return db
}

/** The collection a command names in its first field (`{find: "events"}`). */
export function collectionOf(cmd: IncomingCommand, name: string): string {
  const value = cmd.body[name]
  if (typeof value !== 'string')
    throw mongoError(
      'InvalidNamespace',
      `collection name has invalid type ${typeof value === 'number' ? 'int' : typeof value}`,
    )
  if (value === '') throw mongoError('InvalidNamespace', `Invalid namespace specified '${dbOf(cmd)}.'`)
  return value
}

export function optionalNumber(body: Doc, field: string): number | undefined {
  const value = body[field]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number')
    throw mongoError(
      'TypeMismatch',
      `BSON field '${field}' is the wrong type '${typeof value}', expected types '[long, int, decimal, double]'`,
    )
  return value
}

export function optionalDoc(body: Doc, field: string): Doc | undefined {
  const value = body[field]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value))
    throw mongoError('TypeMismatch', `BSON field '${field}' is the wrong type, expected type 'object'`)
  return value as Doc
}

/** Raw bytes of each item of an array argument: from a document sequence, or the body. */
export function rawItemsOf(cmd: IncomingCommand, field: string): Uint8Array[] {
  return cmd.sequences.get(field) ?? rawItems(cmd.raw, field) ?? []
}
