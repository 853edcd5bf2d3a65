import { Worker } from 'node:worker_threads'
import type { ServerInfo } from './commands/context.ts'
import type { CoreOptions } from './command-core.ts'
import { latencyTable } from './commands/latency.ts'
import { ProtocolError } from './wire/messages.ts'
import { workerEntry } from './worker.ts'

/** What a command thread runs: the writer (catalog, store, writes) or a reader (read-side.ts). */
export type ThreadRole = { kind: 'writer' } | { kind: 'reader' }

export interface ThreadData {
  entry: string
  options: Omit<CoreOptions, 'log'>
  role: ThreadRole
  /** This thread's share of the cursor ids: `owner` of `threads` (cursors.ts). */
  owner: number
  threads: number
  info: ServerInfo
  /** The command counters all the threads add to (commands/counters.ts): the writer makes them. */
  counters?: SharedArrayBuffer
  /** The operation latencies the server's thread records and every thread reports (commands/latency.ts). */
  latencies: SharedArrayBuffer
}

export type ToThread =
  | { type: 'run'; id: number; frame: Uint8Array; connectionId: number }
  | { type: 'info'; info: ServerInfo }
  | { type: 'stop-waiting' }
  | { type: 'close' }

export type FromThread =
  | { type: 'ready'; counters: SharedArrayBuffer }
  | { type: 'failed'; message: string }
  | { type: 'reply'; id: number; reply?: Uint8Array; protocolError?: string; error?: string }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string; error?: string }
  | { type: 'closed' }

/** What starting the writer thread needs to know of the server (see besideWrites in server.ts). */
export interface WriterStart {
  options: Omit<CoreOptions, 'log'> & { readers: number; socketPath: string }
  log: CoreOptions['log']
}

/** The options a command thread is started with, field by field: nothing that cannot be cloned (the log). */
export function threadOptions(options: Omit<CoreOptions, 'log'>): ThreadData['options'] {
  const { dataDir, engine, compression, replSetName, durability } = options
  return { dataDir, engine, compression, replSetName, durability }
}

/** Whether a server splits reads from writes (the memory engine keeps every command on one thread). */
export function hasReaders(options: Pick<CoreOptions, 'engine'> & { readers: number }): boolean {
  return options.engine === 'lmdb' && options.readers > 0
}

/**
 * Starts the writer thread of a server with reader threads. The host of a server on a worker
 * thread calls this before loading the server's modules, so that the two threads load theirs at
 * the same time (about half a second each under tsx); the promise is marked handled, its failure
 * reaches whoever awaits it.
 */
export function startWriter({ options, log }: WriterStart): Promise<CommandThread> {
  const info: ServerInfo = { address: options.socketPath, replSetName: options.replSetName, startedAt: new Date() }
  const writer = CommandThread.start(
    {
      options: threadOptions(options),
      role: { kind: 'writer' },
      owner: 0,
      threads: 1 + options.readers,
      info,
      latencies: latencyTable(),
    },
    log,
  )
  writer.catch(() => undefined)
  return writer
}

/**
 * A worker thread of this process that runs commands sent to it as undecoded messages
 * (command-thread-host.ts) and answers with the encoded reply.
 */
export class CommandThread {
  private nextId = 1
  private readonly pending = new Map<number, { resolve(reply: Uint8Array): void; reject(error: Error): void }>()
  private closing: Promise<void> | undefined
  private ready = false
  /** Set once the thread has ended: later commands fail at once instead of waiting for a reply. */
  private ended: Error | undefined
  /** The command counters this thread adds to (shareCounters). */
  counters: SharedArrayBuffer | undefined

  private constructor(
    private readonly worker: Worker,
    private readonly exited: Promise<void>,
  ) {}

  static start(data: Omit<ThreadData, 'entry'>, log: CoreOptions['log']): Promise<CommandThread> {
    const { url, entry } = workerEntry('command-thread-host')
    const worker = new Worker(url, { workerData: { ...data, entry } satisfies ThreadData })
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    const thread = new CommandThread(worker, exited)
    return new Promise((resolve, reject) => {
      worker.on('message', (message: FromThread) => {
        if (message.type === 'ready') {
          thread.ready = true
          thread.counters = message.counters
          resolve(thread)
        } else if (message.type === 'failed') reject(new Error(message.message))
        else if (message.type === 'log') log(message.level, message.message, message.error)
        else if (message.type === 'reply') thread.settle(message)
      })
      worker.on('error', (error) => {
        log('error', `the embedded MongoDB ${data.role.kind} thread failed`, error)
        reject(error)
        thread.failAll(error)
      })
      worker.once('exit', (code) => {
        const error = new Error(`the embedded MongoDB ${data.role.kind} thread exited (code ${code})`)
        // before ready, the start's rejection says why
        if (thread.ready && !thread.closing) log('error', error.message)
        reject(error)
        thread.failAll(error)
      })
    })
  }

  private settle(message: Extract<FromThread, { type: 'reply' }>): void {
    const waiting = this.pending.get(message.id)
    if (!waiting) return
    this.pending.delete(message.id)
    if (message.reply) waiting.resolve(message.reply)
    else if (message.protocolError !== undefined) waiting.reject(new ProtocolError(message.protocolError))
    else waiting.reject(new Error(message.error ?? 'no reply'))
  }

  private failAll(error: Error): void {
    this.ended = error
    for (const waiting of this.pending.values()) waiting.reject(error)
    this.pending.clear()
  }

  /** Runs one message on the thread; a ProtocolError there is thrown here. */
  run(frame: Buffer, connectionId: number): Promise<Uint8Array> {
    if (this.ended) return Promise.reject(this.ended)
    const id = this.nextId++
    // a copy: the connection reads the frame's header again after the reply
    const bytes = new Uint8Array(frame)
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.post({ type: 'run', id, frame: bytes, connectionId }, [bytes.buffer as ArrayBuffer])
    })
  }

  post(message: ToThread, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer)
  }

  /** Closes what the thread holds (the writer flushes the store) and waits for the thread to end. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((done, fail) => {
      this.worker.on('message', (m: FromThread) => {
        if (m.type === 'closed') done()
        if (m.type === 'failed') fail(new Error(m.message))
      })
      void this.exited.then(() => done())
      this.post({ type: 'close' })
    }).then(async () => {
      const timer = setTimeout(() => void this.worker.terminate(), 2000)
      await this.exited
      clearTimeout(timer)
    })
    return this.closing
  }
}
