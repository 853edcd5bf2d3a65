import { Worker } from 'node:worker_threads'
import type { ServerOptions } from './server.ts'
import type { HostMessage, HostOptions } from './worker-host.ts'

export interface HostedServer {
  /** The TCP port, when asked to listen on TCP too. */
  tcpPort?: number
  close(): Promise<void>
}

/**
 * The URL a worker thread starts from to run `module` (a sibling of this file, named without its
 * extension): under tsx, a bootstrap that registers the TypeScript loader first.
 */
export function workerEntry(module: string): { url: URL; entry: string } {
  // pathname, not the URL: tsx's scoped imports append a query string
  const typescript = new URL(import.meta.url).pathname.endsWith('.ts')
  const entry = new URL(`./${module}.${typescript ? 'ts' : 'js'}`, import.meta.url)
  return { url: typescript ? new URL('./worker-bootstrap.mjs', import.meta.url) : entry, entry: entry.href }
}

/** Runs the server on a worker thread: its own event loop (and core), the same process. */
export function startInWorker(options: ServerOptions): Promise<HostedServer> {
  const { log, ...hostOptions } = options
  const { url, entry } = workerEntry('worker-host')
  const worker = new Worker(url, { workerData: { entry, options: hostOptions satisfies HostOptions } })
  let closed: Promise<void> | undefined
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  return new Promise((resolve, reject) => {
    const onMessage = (message: HostMessage) => {
      if (message.type === 'log') log(message.level, message.message, message.error)
      else if (message.type === 'failed') reject(new Error(message.message))
      else if (message.type === 'ready') {
        resolve({
          tcpPort: message.tcpPort,
          close() {
            closed ??= new Promise<void>((done, fail) => {
              worker.on('message', (m: HostMessage) => {
                if (m.type === 'closed') done()
                if (m.type === 'failed') fail(new Error(m.message))
              })
              worker.once('exit', () => done())
              worker.postMessage({ type: 'close' })
            }).then(async () => {
              // The host has flushed and closed everything; the thread should end on its own.
              const timer = setTimeout(() => void worker.terminate(), 2000)
              await exited
              clearTimeout(timer)
            })
            return closed
          },
        })
      }
    }
    worker.on('message', onMessage)
    // Before ready these reject the start; after it, they can only be reported.
    worker.on('error', (error) => {
      log('error', 'the embedded MongoDB worker thread failed', error)
      reject(error)
    })
    worker.once('exit', (code) => {
      if (!closed) log('error', `the embedded MongoDB worker thread exited (code ${code})`)
      reject(new Error(`the embedded MongoDB worker exited with code ${code} before it was ready`))
    })
  })
}
