/**
 * A reverse proxy between the browser and the service, for what only the network can do to a
 * request: lose a response after the service has stored the events (the client sees a dropped
 * connection and retries), or serve remote config as a service without gzip would.
 */
import { createServer, request } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'

export interface ForwardedRequest {
  method: string
  path: string
  /** What the service answered, whether or not the browser got it; undefined while waiting for it. */
  status?: number
  lost: boolean
  /** Sec-Fetch-Mode: `no-cors` is sendBeacon's. */
  mode?: string
  contentType?: string
  gzip: boolean
  /** uuids of the events in a capture body (gzip, base64 form or JSON); [] for any other body. */
  uuids: string[]
}

/** The event uuids a capture body carries, decoded the ways posthog-js encodes it. */
function uuidsIn(body: Buffer, contentType = ''): string[] {
  try {
    let text = body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body).toString('utf8') : body.toString('utf8')
    if (contentType.startsWith('application/x-www-form-urlencoded'))
      text = Buffer.from(new URLSearchParams(text).get('data') ?? '', 'base64').toString('utf8')
    const json = JSON.parse(text) as unknown
    const events = Array.isArray(json) ? json : ((json as { batch?: unknown[] }).batch ?? [json])
    return events.map((e) => (e as { uuid?: unknown }).uuid).filter((u): u is string => typeof u === 'string')
  } catch {
    return []
  }
}

interface LossRule {
  matches: (method: string, path: string, mode: string | undefined) => boolean
  delayMs: number
}

export class ApiProxy {
  readonly forwarded: ForwardedRequest[] = []
  private loss: LossRule | undefined
  private rewrites: Array<{ pathPrefix: string; rewrite: (body: string) => string }> = []

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(upstream: string): Promise<ApiProxy> {
    let proxy: ApiProxy | undefined
    const server = createServer((req, res) => void proxy?.handle(upstream, req, res).catch(() => res.destroy()))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    proxy = new ApiProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    return proxy
  }

  /** The next matching request reaches the service; its answer is held `delayMs`, then the connection is dropped. */
  loseNextResponse(
    matches: (method: string, path: string, mode: string | undefined) => boolean,
    delayMs: number,
  ): void {
    this.loss = { matches, delayMs }
  }

  /** Bodies of responses whose path starts with `pathPrefix` go through `rewrite` (identity encoding). */
  rewriteResponses(pathPrefix: string, rewrite: (body: string) => string): void {
    this.rewrites.push({ pathPrefix, rewrite })
  }

  private async handle(upstream: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const path = req.url ?? '/'
    const sent = Buffer.concat(chunks)
    const lose = this.loss?.matches(req.method ?? '', path, req.headers['sec-fetch-mode'] as string | undefined)
      ? this.loss
      : undefined
    if (lose) this.loss = undefined
    const record: ForwardedRequest = {
      method: req.method ?? '',
      path,
      lost: lose !== undefined,
      mode: req.headers['sec-fetch-mode'] as string | undefined,
      contentType: req.headers['content-type'],
      gzip: sent[0] === 0x1f && sent[1] === 0x8b,
      uuids: uuidsIn(sent, req.headers['content-type']),
    }
    this.forwarded.push(record)
    const headers = { ...req.headers, host: new URL(upstream).host }
    const rewrite = this.rewrites.find((r) => path.startsWith(r.pathPrefix))
    if (rewrite) delete headers['accept-encoding']
    const upstreamResponse = await new Promise<IncomingMessage>((resolve, reject) => {
      const forward = request(upstream + path, { method: req.method, headers }, resolve)
      forward.on('error', reject)
      forward.end(sent)
    })
    const body: Buffer[] = []
    for await (const chunk of upstreamResponse) body.push(chunk as Buffer)
    const status = upstreamResponse.statusCode ?? 502
    record.status = status
    if (lose) {
      await new Promise((resolve) => setTimeout(resolve, lose.delayMs))
      req.socket.destroy()
      return
    }
    let payload = Buffer.concat(body)
    const responseHeaders = { ...upstreamResponse.headers }
    if (rewrite) {
      payload = Buffer.from(rewrite.rewrite(payload.toString('utf8')))
      responseHeaders['content-length'] = String(payload.length)
      delete responseHeaders.etag
    }
    res.writeHead(status, responseHeaders)
    res.end(payload)
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}
