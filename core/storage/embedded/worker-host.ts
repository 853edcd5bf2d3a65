/**
 * Entry point of the worker thread that hosts the server (see worker.ts for the parent side).
 * Messages from the parent: {type: 'close'}. To the parent: ready, log, closed, failed.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { hasReaders, startWriter } from './command-thread.ts'
import type { EmbeddedServer, ServerOptions } from './server.ts'

export type HostMessage =
  | { type: 'ready'; tcpPort?: number }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string; error?: string }
  | { type: 'closed' }
  | { type: 'failed'; message: string }

export type HostOptions = Omit<ServerOptions, 'log'>

function post(message: HostMessage): void {
  parentPort?.postMessage(message)
}

async function host(): Promise<void> {
  const options = (workerData as { options: HostOptions }).options
  const log: ServerOptions['log'] = (level, message, error) =>
    post({
      type: 'log',
      level,
      message,
      error: error === undefined ? undefined : String(error instanceof Error ? error.stack : error),
    })
  // the writer thread loads its modules while this one loads the server's (imported below, not above)
  const writer = hasReaders(options) ? startWriter({ options, log }) : undefined
  let server: EmbeddedServer
  try {
    const { EmbeddedServer } = await import('./server.ts')
    server = await EmbeddedServer.start({ ...options, log }, writer)
  } catch (error) {
    // (closing twice is harmless: the server closes its writer when its own start fails)
    await writer?.then((thread) => thread.close()).catch(() => undefined)
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) })
    return
  }
  parentPort?.on('message', (message: { type?: string }) => {
    if (message.type !== 'close') return
    server.close().then(
      () => {
        post({ type: 'closed' })
        parentPort?.close()
      },
      (error: unknown) => post({ type: 'failed', message: String(error) }),
    )
  })
  post({ type: 'ready', tcpPort: server.info.tcpPort })
}

void host()
