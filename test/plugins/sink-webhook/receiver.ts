/**
 * A real HTTP receiver on a loopback port for the webhook tests. Each path has its own record
 * and its own failure plan: answer the next N requests with a status, delay them, or never answer.
 */
import http from 'node:http'
import type { IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { signature } from '../../../plugins/sink-webhook/post.ts'

export interface Delivery {
  readonly at: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** Whether the signature header matches HMAC-SHA256 of `<timestamp>.<body>` with the secret. */
  readonly signed: boolean
  readonly status: number
}

/** After a 200's headers: 'endless' writes body as fast as the client reads it, 'stall' writes none and never ends. */
export type BodyMode = 'endless' | 'stall'

/** What the receiver wrote in one streamed response, and whether the client has let go of it. */
export interface Stream {
  written: number
  closedAt?: number
}

interface Plan {
  status: number
  times: number
  delayMs: number
  headers: Record<string, string>
  body?: BodyMode
}

export class Receiver {
  private readonly requests = new Map<string, Delivery[]>()
  private readonly plans = new Map<string, Plan[]>()
  private readonly hanging = new Set<http.ServerResponse>()
  private readonly streamed = new Map<string, Stream[]>()

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    private readonly secret: string,
    private readonly signatureHeader: string,
  ) {}

  static async start(secret: string, signatureHeader = 'x-hedgerow-signature'): Promise<Receiver> {
    let receiver: Receiver | undefined
    const server = http.createServer((req, res) => receiver!.handle(req, res))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    receiver = new Receiver(server, (server.address() as AddressInfo).port, secret, signatureHeader.toLowerCase())
    return receiver
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`
  }

  /** Every request to `path`, answered or not, in arrival order. */
  attempts(path: string): Delivery[] {
    return this.requests.get(path) ?? []
  }

  /** The requests to `path` answered with a 2xx. */
  delivered(path: string): Delivery[] {
    return this.attempts(path).filter((d) => d.status < 300)
  }

  /** Events of the delivered requests, parsed. */
  events(path: string): Array<Record<string, unknown>> {
    return this.delivered(path).flatMap(
      (d) => (JSON.parse(d.body) as { events: Array<Record<string, unknown>> }).events,
    )
  }

  /** Answers the next `times` requests to `path` with `status` (Infinity: from now on); 0 never answers. */
  plan(path: string, status: number, times = 1, delayMs = 0, headers: Record<string, string> = {}): void {
    const plans = this.plans.get(path) ?? []
    plans.push({ status, times, delayMs, headers })
    this.plans.set(path, plans)
  }

  /** Answers the next request to `path` with a 200 whose body never ends (see BodyMode). */
  planBody(path: string, body: BodyMode): void {
    const plans = this.plans.get(path) ?? []
    plans.push({ status: 200, times: 1, delayMs: 0, headers: {}, body })
    this.plans.set(path, plans)
  }

  /** The streamed responses to `path`, in arrival order. */
  streams(path: string): Stream[] {
    return this.streamed.get(path) ?? []
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy()
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const path = req.url ?? '/'
      const body = Buffer.concat(chunks).toString('utf8')
      const plans = this.plans.get(path) ?? []
      const plan = plans[0]
      if (plan && --plan.times <= 0) plans.shift()
      const status = plan?.status ?? 200
      const timestamp = String(req.headers['x-hedgerow-timestamp'])
      const signed = req.headers[this.signatureHeader] === signature(this.secret, timestamp, body)
      const list = this.requests.get(path) ?? []
      list.push({ at: Date.now(), headers: req.headers, body, signed, status })
      this.requests.set(path, list)
      if (status === 0) {
        this.hanging.add(res)
        return
      }
      if (plan?.body) {
        this.stream(path, res, plan.body)
        return
      }
      setTimeout(
        () => res.writeHead(status, { 'Content-Type': 'application/json', ...plan?.headers }).end('{}'),
        plan?.delayMs ?? 0,
      )
    })
  }

  private stream(path: string, res: http.ServerResponse, mode: BodyMode): void {
    const record: Stream = { written: 0 }
    this.streamed.set(path, [...this.streams(path), record])
    this.hanging.add(res)
    res.on('close', () => (record.closedAt = Date.now()))
    res.writeHead(200, { 'Content-Type': 'application/json' })
    if (mode === 'stall') {
      res.write('{')
      return
    }
    const chunk = Buffer.alloc(16 * 1024, 0x20)
    // Writes until the socket pushes back, then again on each drain: endless, at the client's pace.
    const pump = () => {
      let more = true
      while (more && !res.destroyed) {
        more = res.write(chunk)
        record.written += chunk.length
      }
    }
    res.on('drain', pump)
    pump()
  }
}
