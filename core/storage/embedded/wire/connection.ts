import type { Socket } from 'node:net'
import { expectsNoReply, HEADER_SIZE, MAX_MESSAGE_SIZE, OpCode, opMsgReply, opReply, readHeader } from './messages.ts'

/**
 * Runs one message (parseFrame reads it) and resolves to the reply's body. A ProtocolError
 * closes the connection. The frame is given undecoded: the server may run it on another thread.
 */
export type Execute = (frame: Buffer) => Promise<Uint8Array>

/** Told of each message handled: its frame and the performance.now() at which its handling began. */
export type Handled = (frame: Buffer, startedAt: number) => void

/**
 * One client connection: cuts the byte stream into messages and runs them one after the other
 * (a connection's commands are ordered, as with mongod), writing each reply before the next.
 */
export class Connection {
  private chunks: Buffer[] = []
  private buffered = 0
  private queue: Promise<void> = Promise.resolve()
  private closed = false

  constructor(
    private readonly socket: Socket,
    private readonly execute: Execute,
    private readonly onError: (error: unknown) => void,
    private readonly handled?: Handled,
  ) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.receive(chunk))
    socket.on('error', () => this.close())
    socket.on('close', () => {
      this.closed = true
    })
  }

  /** Resolves when every message received so far has been handled. */
  get idle(): Promise<void> {
    return this.queue
  }

  close(): void {
    this.closed = true
    this.socket.destroy()
  }

  private receive(chunk: Buffer): void {
    this.chunks.push(chunk)
    this.buffered += chunk.length
    while (this.buffered >= 4) {
      const head = this.chunks[0].length >= 4 ? this.chunks[0] : Buffer.concat(this.chunks)
      const length = head.readInt32LE(0)
      if (length < HEADER_SIZE || length > MAX_MESSAGE_SIZE) {
        this.close()
        return
      }
      if (this.buffered < length) return
      const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered)
      const frame = all.subarray(0, length)
      const rest = all.subarray(length)
      this.chunks = rest.length ? [rest] : []
      this.buffered = rest.length
      this.queue = this.queue
        .then(() => this.handle(frame))
        .catch((error: unknown) => {
          this.onError(error)
          this.close()
        })
    }
  }

  private async handle(frame: Buffer): Promise<void> {
    if (this.closed) return
    const startedAt = performance.now()
    const header = readHeader(frame)
    const reply = await this.execute(frame)
    if (!expectsNoReply(frame) && !this.closed) {
      const parts =
        header.opCode === OpCode.query ? opReply(header.requestId, reply) : opMsgReply(header.requestId, reply)
      this.socket.cork()
      for (const part of parts) this.socket.write(part)
      this.socket.uncork()
    }
    try {
      this.handled?.(frame, startedAt)
    } catch (error) {
      // statistics never cost a client its connection
      this.onError(error)
    }
  }
}
