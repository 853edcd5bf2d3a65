import { chmodSync } from 'node:fs'
import { createServer, type AddressInfo, type ListenOptions, type Server, type Socket } from 'node:net'
import { CommandCore, type CoreOptions } from './command-core.ts'
import { CommandThread, hasReaders, startWriter, threadOptions } from './command-thread.ts'
import type { ServerInfo } from './commands/context.ts'
import { shareCounters } from './commands/counters.ts'
import { latencyTable, recordLatency } from './commands/latency.ts'
import { CursorRegistry } from './cursors.ts'
import { tcpAddress } from './listen-address.ts'
import { LmdbReadView } from './lmdb/read-view.ts'
import { FILE_MODE } from './persistence/data-dir.ts'
import { READER_COMMANDS, ReadSide, ROUTED_BY_CONTENT, threadFor } from './read-side.ts'
import { Connection } from './wire/connection.ts'
import { OpCode, parseFrame, peekCommandName, type IncomingCommand } from './wire/messages.ts'

export type { StorageEngine } from './command-core.ts'

export interface ServerOptions extends CoreOptions {
  /** The Unix socket to listen on (a stale file there must have been removed by the lock holder). */
  socketPath: string
  /** Also listen on TCP (tools on a machine that can't use the socket): any local user can connect. */
  tcp?: { host: string; port: number }
  /**
   * lmdb only: how many threads answer reads (find, count, distinct, aggregate) while another
   * thread writes. 0: every command runs on the server's one thread, in turn.
   */
  readers: number
}

/** Who runs the commands the connections receive. */
interface Commands {
  execute(frame: Buffer, connectionId: number): Promise<Uint8Array>
  /** The server now listens at `info.address`: threads with a copy of the info learn it. */
  listening(info: ServerInfo): void
  /** Ends change streams' waits and index builds, so that the connections' last commands finish. */
  stopWaiting(): void
  close(): Promise<void>
}

/** Every command on this thread, in turn (write-turns.ts lets reads in between queued writes). */
function oneThread(core: CommandCore): Commands {
  return {
    execute: (frame, connectionId) => core.execute(parseFrame(frame), connectionId),
    listening() {},
    stopWaiting: () => core.stopWaiting(),
    close: () => core.close(),
  }
}

/**
 * Reads beside writes (lmdb): a writer thread owns the data folder and runs every command but
 * reads; this thread, which holds the connections and so is never busy with a write, answers the
 * reads from its own view of the environment, and so do `readers - 1` further reader threads,
 * taken in turn. A read sees every write acknowledged before it arrived: the writer commits
 * before it replies, and each read starts a new read transaction (LmdbReadView.begin).
 */
async function besideWrites(
  options: ServerOptions,
  info: ServerInfo,
  writerStarting: Promise<CommandThread>,
): Promise<Commands> {
  const core = threadOptions(options)
  const threads = 1 + options.readers
  const writer = await writerStarting
  const counters = shareCounters(writer.counters, 1, threads)
  const others: CommandThread[] = []
  let here: ReadSide
  try {
    here = new ReadSide(LmdbReadView.open(options.dataDir, options.compression), new CursorRegistry(1, threads), info)
    for (let owner = 2; owner < threads; owner++)
      others.push(
        await CommandThread.start(
          { options: core, role: { kind: 'reader' }, owner, threads, info, counters, latencies: latencyTable() },
          options.log,
        ),
      )
  } catch (error) {
    await Promise.all(others.map((t) => t.close()))
    await writer.close()
    throw error
  }
  let turn = 0
  return {
    execute(frame, connectionId) {
      let name = peekCommandName(frame)
      let cmd: IncomingCommand | undefined
      // OP_QUERY: a new connection's first hello, which must not wait behind a write either
      if (name === undefined && frame.readInt32LE(12) === OpCode.query) {
        cmd = parseFrame(frame)
        name = Object.keys(cmd.body)[0]
      }
      if (name === undefined || !READER_COMMANDS.has(name)) return writer.run(frame, connectionId)
      turn = (turn + 1) % options.readers
      // decoded here only when this thread answers it or its content picks the thread
      if (!cmd && ROUTED_BY_CONTENT.has(name)) cmd = parseFrame(frame)
      const thread = cmd ? threadFor(cmd, name, threads, 1 + turn) : 1 + turn
      if (thread === 1) return here.run(cmd ?? parseFrame(frame), connectionId)
      return (thread === 0 ? writer : others[thread - 2]).run(frame, connectionId)
    },
    listening(info) {
      for (const thread of [writer, ...others]) thread.post({ type: 'info', info })
    },
    stopWaiting: () => writer.post({ type: 'stop-waiting' }),
    async close() {
      await here.close()
      await Promise.all(others.map((t) => t.close()))
      await writer.close()
    },
  }
}

function listen(server: Server, where: ListenOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(where, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

/**
 * The embedded server: Unix socket (and TCP) listeners on the current thread and the commands
 * behind them, run here one at a time (oneThread) or, with reader threads, split between a writer
 * thread and the readers (besideWrites). A write's reply waits until it is committed (and, when
 * asked or configured, fsynced).
 */
export class EmbeddedServer {
  private readonly connections = new Set<Connection>()
  private nextConnectionId = 1
  private closed: Promise<void> | undefined

  private constructor(
    private readonly listeners: Server[],
    private readonly commands: Commands,
    readonly info: ServerInfo,
    private readonly log: ServerOptions['log'],
  ) {}

  /** `writer`: the writer thread, when the caller has started it already (startWriter). */
  static async start(options: ServerOptions, writer?: Promise<CommandThread>): Promise<EmbeddedServer> {
    const info: ServerInfo = { address: options.socketPath, replSetName: options.replSetName, startedAt: new Date() }
    const commands = hasReaders(options)
      ? await besideWrites(options, info, writer ?? startWriter({ options, log: options.log }))
      : oneThread(await CommandCore.open(options, info))
    const listeners = [createServer(), ...(options.tcp ? [createServer()] : [])]
    const embedded = new EmbeddedServer(listeners, commands, info, options.log)
    for (const listener of listeners) listener.on('connection', (socket) => embedded.accept(socket))
    try {
      await listen(listeners[0], { path: options.socketPath })
      // The folder (0700) already keeps other users out; the socket follows the files' mode too.
      chmodSync(options.socketPath, FILE_MODE)
      if (options.tcp) {
        await listen(listeners[1], options.tcp)
        info.tcpPort = (listeners[1].address() as AddressInfo).port
        info.address = tcpAddress(options.tcp.host, info.tcpPort)
      }
      commands.listening(info)
    } catch (error) {
      await embedded.close()
      throw error
    }
    return embedded
  }

  private accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy()
      return
    }
    const connectionId = this.nextConnectionId++
    const connection = new Connection(
      socket,
      (frame) => this.commands.execute(frame, connectionId),
      (e) => this.log('warn', 'connection error', e),
      (frame, startedAt) => recordLatency(frame, (performance.now() - startedAt) * 1000),
    )
    this.connections.add(connection)
    socket.on('close', () => this.connections.delete(connection))
  }

  /** Stops listening, closes connections, then flushes and closes the data folder. */
  close(): Promise<void> {
    this.closed ??= this.shutdown()
    return this.closed
  }

  private async shutdown(): Promise<void> {
    const stopped = Promise.all(
      this.listeners.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve()))),
    )
    for (const connection of this.connections) connection.close()
    this.commands.stopWaiting()
    await Promise.all([...this.connections].map((c) => c.idle))
    await stopped
    await this.commands.close()
  }
}
