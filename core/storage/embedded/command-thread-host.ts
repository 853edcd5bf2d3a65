/**
 * Entry point of a command thread (command-thread.ts is the other side): the writer, which opens
 * the data folder and runs every command but reads, or a reader, which answers reads from its own
 * view of the lmdb environment.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { CommandCore } from './command-core.ts'
import type { FromThread, ThreadData, ToThread } from './command-thread.ts'
import { shareCounters } from './commands/counters.ts'
import { latencyTable } from './commands/latency.ts'
import { CursorRegistry } from './cursors.ts'
import { LmdbReadView } from './lmdb/read-view.ts'
import { ReadSide } from './read-side.ts'
import { parseFrame, ProtocolError } from './wire/messages.ts'

function post(message: FromThread, transfer: ArrayBuffer[] = []): void {
  parentPort?.postMessage(message, transfer)
}

interface Runner {
  execute(frame: Buffer, connectionId: number): Promise<Uint8Array>
  stopWaiting(): void
  close(): Promise<void>
}

async function open(data: ThreadData): Promise<Runner> {
  const cursors = new CursorRegistry(data.owner, data.threads)
  if (data.role.kind === 'reader') {
    const reads = new ReadSide(LmdbReadView.open(data.options.dataDir, data.options.compression), cursors, data.info)
    return { execute: (frame, id) => reads.run(parseFrame(frame), id), stopWaiting() {}, close: () => reads.close() }
  }
  const core = await CommandCore.open(
    {
      ...data.options,
      log: (level, message, error) =>
        post({
          type: 'log',
          level,
          message,
          error: error === undefined ? undefined : String(error instanceof Error ? error.stack : error),
        }),
    },
    data.info,
    cursors,
  )
  return {
    execute: (frame, id) => core.execute(parseFrame(frame), id),
    stopWaiting: () => core.stopWaiting(),
    close: () => core.close(),
  }
}

async function run(runner: Runner, id: number, frame: Buffer, connectionId: number): Promise<void> {
  try {
    // a copy of its own, moved to the other thread: the reply may be kept here (retryable writes)
    const reply = new Uint8Array(await runner.execute(frame, connectionId))
    post({ type: 'reply', id, reply }, [reply.buffer])
  } catch (error) {
    if (error instanceof ProtocolError) post({ type: 'reply', id, protocolError: error.message })
    else post({ type: 'reply', id, error: error instanceof Error ? error.message : String(error) })
  }
}

async function host(): Promise<void> {
  const data = workerData as ThreadData
  let runner: Runner
  let counters: SharedArrayBuffer
  try {
    counters = shareCounters(data.counters, data.owner, data.threads)
    latencyTable(data.latencies)
    runner = await open(data)
  } catch (error) {
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) })
    return
  }
  parentPort?.on('message', (message: ToThread) => {
    if (message.type === 'run') {
      const frame = Buffer.from(message.frame.buffer, message.frame.byteOffset, message.frame.byteLength)
      void run(runner, message.id, frame, message.connectionId)
    } else if (message.type === 'info') Object.assign(data.info, message.info)
    else if (message.type === 'stop-waiting') runner.stopWaiting()
    else if (message.type === 'close')
      runner.close().then(
        () => {
          post({ type: 'closed' })
          parentPort?.close()
        },
        (error: unknown) => post({ type: 'failed', message: String(error) }),
      )
  })
  post({ type: 'ready', counters })
}

void host()
