/**
 * Flag definition changes pushed to clients as Server-Sent Events, in the shape of OFREP's ADR 0008
 * (`event: message`, `data: {"type": "refetchEvaluation", "etag", "lastModified"}`): each event
 * tells a provider to fetch its evaluations again. An event is sent once the cache holds the new
 * definitions, so a fetch it triggers (OFREP or /flags/definitions) already sees them.
 *
 * Where changes come from: this process's admin API reloads the cache before it answers; other
 * processes' writes arrive through a change stream on the versions collection (a replica set),
 * else through the cache's version poll (the embedded store `npm start` runs is not one).
 *
 * An event's id is the definitions' `<generation>.<version>`, the same in every process: a client
 * reconnecting with a `Last-Event-ID` that is not the current one has missed a change and gets one
 * event at once (events only say "fetch again", so one stands for all it missed).
 */
import type { ServerResponse } from 'node:http'
import type { ChangeStream, Db } from 'mongodb'
import type { Logger } from 'pino'
import type { DefinitionsCache } from '../cache.ts'
import type { ProjectDefinitions } from '../project-definitions.ts'
import { DECIDE_COLLECTIONS } from '../store/documents.ts'

/** Comment lines keep proxies from closing an idle stream. */
const HEARTBEAT_MS = 25_000
/** What EventSource waits before reconnecting after the stream ends. */
const RETRY_MS = 1000

export function eventIdOf(definitions: ProjectDefinitions): string {
  return `${definitions.generation}.${definitions.version}`
}

function eventText(definitions: ProjectDefinitions): string {
  const data = {
    type: 'refetchEvaluation',
    etag: definitions.sdkBody().etag,
    lastModified: Math.floor(Date.now() / 1000),
  }
  return `id: ${eventIdOf(definitions)}\nevent: message\ndata: ${JSON.stringify(data)}\n\n`
}

export class DefinitionEventStreams {
  /** Open streams by project. A stream is its response: nothing else is kept per connection. */
  private readonly streams = new Map<number, Set<ServerResponse>>()
  private readonly heartbeat: NodeJS.Timeout
  private watcher: ChangeStream | undefined
  private readonly stopListening: () => void

  constructor(
    private readonly cache: DefinitionsCache,
    private readonly logger: Logger,
  ) {
    this.stopListening = cache.onChange((definitions) => this.announce(definitions))
    this.heartbeat = setInterval(() => this.writeAll(': ping\n\n'), HEARTBEAT_MS)
    this.heartbeat.unref()
  }

  /** Watches the versions collection so other processes' changes arrive at once; without a replica set, the poll serves. */
  watch(db: Db): void {
    try {
      const watcher = db
        .collection(DECIDE_COLLECTIONS.versions)
        .watch([{ $match: { operationType: { $in: ['insert', 'update', 'replace'] } } }], {
          fullDocument: 'updateLookup',
        })
      watcher.on('change', (change) => {
        const projectId = (change as { fullDocument?: { project_id?: unknown } }).fullDocument?.project_id
        if (typeof projectId === 'number' && this.cache.cached(projectId))
          void this.cache.reload(projectId).catch(() => undefined)
      })
      watcher.on('error', (error) => {
        // expected of a standalone MongoDB: one line, not a stack
        this.logger.info(
          { reason: error.message },
          'flag definition changes: no change stream (not a replica set?); other processes’ changes arrive with the version poll',
        )
        void watcher.close().catch(() => undefined)
        if (this.watcher === watcher) this.watcher = undefined
      })
      this.watcher = watcher
    } catch (error) {
      this.logger.info(
        { reason: (error as Error).message },
        'flag definition changes: no change stream; other processes’ changes arrive with the version poll',
      )
    }
  }

  /** Holds `res` open as the project's event stream until the client leaves or the service closes. */
  async open(projectId: number, res: ServerResponse, lastEventId: string | undefined): Promise<void> {
    const definitions = await this.cache.get(projectId)
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    })
    res.write(`retry: ${RETRY_MS}\n\n`)
    if (lastEventId !== undefined && lastEventId !== eventIdOf(definitions)) res.write(eventText(definitions))
    let open = this.streams.get(projectId)
    if (!open) this.streams.set(projectId, (open = new Set()))
    open.add(res)
    res.on('close', () => {
      open.delete(res)
      if (open.size === 0 && this.streams.get(projectId) === open) this.streams.delete(projectId)
    })
  }

  get connections(): number {
    let count = 0
    for (const open of this.streams.values()) count += open.size
    return count
  }

  private announce(definitions: ProjectDefinitions): void {
    const open = this.streams.get(definitions.projectId)
    if (!open || open.size === 0) return
    const text = eventText(definitions)
    for (const res of open) res.write(text)
  }

  private writeAll(text: string): void {
    for (const open of this.streams.values()) for (const res of open) res.write(text)
  }

  /** Ends every stream (the service is closing) and stops listening. */
  close(): void {
    clearInterval(this.heartbeat)
    this.stopListening()
    void this.watcher?.close().catch(() => undefined)
    this.watcher = undefined
    for (const open of this.streams.values()) for (const res of open) res.end()
    this.streams.clear()
  }
}
