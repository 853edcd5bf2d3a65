/**
 * A real `nats-server -js` for the tests, on a loopback port it picks itself (`-p -1`), with its
 * store in a temporary folder. Suites using it call `requireTool('nats-server')` first (./requires.ts),
 * which skips them where it is missing; `.ci/run` installs the Debian package.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { connect } from 'nats'
import type { NatsConnection } from 'nats'
import { NATS_SERVER, TOOLS, missingReason } from './requires.ts'

const READY_WITHIN_MS = 10_000

export class NatsServer {
  private child?: ChildProcess
  port = 0
  private readonly storeDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-nats-'))

  get url(): string {
    return `nats://127.0.0.1:${this.port}`
  }

  /** Starts the server (again on the same port after `stop`, with the same store). */
  async start(): Promise<void> {
    const missing = missingReason('nats-server')
    if (missing) throw new Error(`${missing}: ${TOOLS['nats-server'].enable}`)
    const child = spawn(NATS_SERVER, ['-js', '-a', '127.0.0.1', '-p', String(this.port || -1), '-sd', this.storeDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    this.child = child
    let log = ''
    this.port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`nats-server was not ready within ${READY_WITHIN_MS} ms:\n${log}`)),
        READY_WITHIN_MS,
      )
      child.stderr!.on('data', (chunk: Buffer) => {
        log += chunk.toString()
        const port = /Listening for client connections on [^\s]+:(\d+)/.exec(log)?.[1]
        if (port && log.includes('Server is ready')) {
          clearTimeout(timer)
          resolve(Number(port))
        }
      })
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`nats-server exited with ${code}:\n${log}`))
      })
    })
    child.stderr!.resume()
  }

  async stop(): Promise<void> {
    const child = this.child
    this.child = undefined
    if (!child || child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }

  async close(): Promise<void> {
    await this.stop()
    rmSync(this.storeDir, { recursive: true, force: true })
  }

  connect(): Promise<NatsConnection> {
    return connect({ servers: this.url, timeout: 2000 })
  }
}

export interface StreamMessage {
  readonly subject: string
  readonly msgId?: string
  readonly json: Record<string, unknown>
}

/** Every message a stream holds, in order (empty when the stream does not exist). */
export async function readStream(nc: NatsConnection, stream: string): Promise<StreamMessage[]> {
  const jsm = await nc.jetstreamManager()
  const info = await jsm.streams.info(stream).catch(() => undefined)
  if (!info || info.state.messages === 0) return []
  const consumer = await nc.jetstream().consumers.get(stream)
  const messages: StreamMessage[] = []
  for await (const m of await consumer.fetch({ max_messages: info.state.messages, expires: 2000 })) {
    messages.push({ subject: m.subject, msgId: m.headers?.get('Nats-Msg-Id'), json: m.json<Record<string, unknown>>() })
    if (messages.length === info.state.messages) break
  }
  return messages
}
