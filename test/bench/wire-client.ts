/**
 * A minimal client of the MongoDB wire protocol for the benchmarks: one socket, one OP_MSG at a
 * time, the reply returned undecoded. It costs the client a fraction of the driver's CPU and
 * garbage per command, so its round trips show the server and the socket with little of the client.
 */
import net from 'node:net'
import { serialize, type Document } from 'bson'

const HEADER = 16
const OP_MSG = 2013

export class WireClient {
  private nextId = 1
  private buffered: Buffer = Buffer.alloc(0)
  private waiting: ((reply: Buffer) => void) | undefined

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.receive(chunk))
  }

  /** Connects to the host and port of a mongodb:// URL (TCP). */
  static connect(url: string): Promise<WireClient> {
    const { hostname, port } = new URL(url)
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => resolve(new WireClient(socket)))
      socket.once('error', reject)
    })
  }

  /** An OP_MSG carrying `body`, encoded once so that sending it costs nothing more. */
  message(body: Document): Buffer {
    const bytes = serialize(body)
    const frame = Buffer.alloc(HEADER + 5 + bytes.length)
    frame.writeInt32LE(frame.length, 0)
    frame.writeInt32LE(this.nextId++ & 0x7fffffff, 4)
    frame.writeInt32LE(OP_MSG, 12)
    frame.set(bytes, HEADER + 5)
    return frame
  }

  /** Sends one message and resolves to the whole reply frame. */
  request(message: Buffer): Promise<Buffer> {
    return new Promise((resolve) => {
      this.waiting = resolve
      this.socket.write(message)
    })
  }

  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk
    if (this.buffered.length < 4 || this.buffered.length < this.buffered.readInt32LE(0)) return
    const reply = this.buffered.subarray(0, this.buffered.readInt32LE(0))
    this.buffered = this.buffered.subarray(reply.length)
    const waiting = this.waiting
    this.waiting = undefined
    waiting?.(reply)
  }

  close(): void {
    this.socket.end()
  }
}
