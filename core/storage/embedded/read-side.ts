import { isPlainObject } from './bson/codec.ts'
import type { ServerInfo } from './commands/context.ts'
import { runCommand } from './commands/dispatch.ts'
import { cursorOwner, type CursorRegistry } from './cursors.ts'
import type { LmdbReadView } from './lmdb/read-view.ts'
import type { IncomingCommand } from './wire/messages.ts'

/**
 * Commands a reader thread may answer: they read documents or nothing at all. Everything else
 * (writes, index and collection commands, change streams, server status, parameters) runs on the
 * writer thread, which owns the catalog.
 */
export const READER_COMMANDS = new Set([
  'find',
  'count',
  'distinct',
  'aggregate',
  'explain',
  'getMore',
  'killCursors',
  'listCollections',
  'listIndexes',
  'listDatabases',
  'collStats',
  'dbStats',
  // a new connection's handshake and the driver's heartbeats must not wait behind a long write
  'hello',
  'isMaster',
  'ismaster',
  'ping',
  'buildInfo',
  'endSessions',
])

/** Commands whose content picks the thread that answers them (threadFor). */
export const ROUTED_BY_CONTENT = new Set(['getMore', 'killCursors', 'aggregate'])

/** Pipeline stages that write or follow the writer's change feed. */
const WRITER_STAGES = ['$out', '$merge', '$changeStream']

function writesOrFollows(pipeline: unknown): boolean {
  if (!Array.isArray(pipeline)) return false
  return pipeline.some((stage) => isPlainObject(stage) && WRITER_STAGES.some((name) => name in stage))
}

/**
 * Which command thread answers a command that READER_COMMANDS lets a reader answer: `reader` (a
 * reader's choice), or the thread that owns the cursor it continues (cursors.ts), or 0, the
 * writer, for an aggregation that writes or opens a change stream.
 */
export function threadFor(cmd: IncomingCommand, name: string, threads: number, reader: number): number {
  if (name === 'getMore') return typeof cmd.body.getMore === 'number' ? cursorOwner(cmd.body.getMore, threads) : reader
  if (name === 'killCursors') {
    // the driver kills one cursor per command; ids of another thread's cursors are reported not found
    const [first] = Array.isArray(cmd.body.cursors) ? cmd.body.cursors : []
    return typeof first === 'number' ? cursorOwner(first, threads) : reader
  }
  if (name === 'aggregate' && writesOrFollows(cmd.body.pipeline)) return 0
  return reader
}

/** The reads one thread answers from an lmdb read view, with the cursors it opened. */
export class ReadSide {
  private readonly parameters = { ttlMonitorSleepSecs: 60 }

  constructor(
    private readonly view: LmdbReadView,
    private readonly cursors: CursorRegistry,
    private readonly info: ServerInfo,
  ) {}

  /** Runs a command READER_COMMANDS names, on the data as of now (see LmdbReadView.begin). */
  run(cmd: IncomingCommand, connectionId: number): Promise<Uint8Array> {
    const notHere = () => Promise.reject(new Error('not run on a reader thread'))
    return runCommand(cmd, {
      catalog: this.view.begin(),
      cursors: this.cursors,
      info: this.info,
      parameters: this.parameters,
      connectionId,
      syncLog: notHere,
      compactLog: notHere,
      indexBuilds: { start: notHere, wait: notHere },
      after: [],
    })
  }

  async close(): Promise<void> {
    this.cursors.close()
    await this.view.close()
  }
}
