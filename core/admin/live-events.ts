/**
 * The live event stream, `GET /api/projects/:id/events/stream`: a project's events as they are
 * stored, as Server-Sent Events. Events come from the `events` service's follower (sink-mongo: a
 * change stream on its collection, so only events that were really stored, whichever process
 * stored them). Each is sent as `id: <event id>` + `event: event` + `data: <event JSON>`; a
 * client reconnecting with `Last-Event-ID` first gets the events stored after that one.
 *
 * Memory stays bounded per connection: when a client reads slower than events arrive and the
 * response already holds BUFFER_LIMIT bytes unsent, events are dropped rather than queued, and
 * once the response drains the client gets `event: dropped` with how many it missed.
 */
import type { ServerResponse } from 'node:http'
import type { EventsFollowQuery, EventsReader, StoredEvent } from '../plugin-api.ts'
import { httpError } from '../errors.ts'
import { eventJson } from './events.ts'

/** Unsent bytes a response may hold before events are dropped for it. */
export const BUFFER_LIMIT = 256 * 1024
/** What EventSource-like clients wait before reconnecting after the stream ends. */
const RETRY_MS = 1000

interface Connection {
  readonly res: ServerResponse
  dropped: number
}

function frame(stored: StoredEvent): string {
  return `id: ${stored.id}\nevent: event\ndata: ${JSON.stringify(eventJson(stored.document))}\n\n`
}

export class LiveEventStreams {
  private readonly open = new Set<Connection>()
  private readonly heartbeat: NodeJS.Timeout
  private closed = false

  constructor(heartbeatMs: number) {
    this.heartbeat = setInterval(() => {
      for (const connection of this.open) this.write(connection, ': ping\n\n')
    }, heartbeatMs)
    this.heartbeat.unref()
  }

  get connections(): number {
    return this.open.size
  }

  /** Holds `res` open as the stream of `projectId`'s events until the client leaves or the service closes. */
  async start(
    events: EventsReader | undefined,
    projectId: number,
    query: EventsFollowQuery,
    res: ServerResponse,
  ): Promise<void> {
    if (!events?.follow)
      throw httpError('not_found', 'no configured plugin can follow stored events (sink-mongo does): no live stream')
    if (this.closed) throw httpError('unavailable', 'the service is shutting down')
    const connection: Connection = { res, dropped: 0 }
    let started = false
    const pending: string[] = []
    const send = (text: string) => (started ? this.send(connection, text) : pending.push(text))
    const follower = await events.follow(projectId, query, {
      event: (stored) => send(frame(stored)),
      missed: (count) => send(`event: dropped\ndata: ${JSON.stringify({ count, reason: 'catch_up_limit' })}\n\n`),
      error: () => res.end(),
    })
    if (res.destroyed) {
      // the client left while the follower was starting: nothing will close it otherwise
      await follower.close()
      return
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    })
    res.write(`retry: ${RETRY_MS}\n\n`)
    started = true
    for (const text of pending) this.send(connection, text)
    this.open.add(connection)
    res.on('drain', () => this.announceDropped(connection))
    res.on('close', () => {
      this.open.delete(connection)
      void follower.close()
    })
    if (this.closed) res.end()
  }

  private send(connection: Connection, text: string): void {
    if (connection.res.writableLength >= BUFFER_LIMIT) connection.dropped++
    else this.write(connection, text)
  }

  private announceDropped(connection: Connection): void {
    if (connection.dropped === 0) return
    const count = connection.dropped
    connection.dropped = 0
    this.write(connection, `event: dropped\ndata: ${JSON.stringify({ count, reason: 'slow_client' })}\n\n`)
  }

  private write(connection: Connection, text: string): void {
    if (!connection.res.writableEnded) connection.res.write(text)
  }

  /** Ends every stream: the service is closing. */
  close(): void {
    this.closed = true
    clearInterval(this.heartbeat)
    for (const connection of this.open) connection.res.end()
    this.open.clear()
  }
}
