import type { Doc } from './bson/codec.ts'
import { mongoError } from './errors.ts'
import { cursorReply } from './wire/cursor-reply.ts'

/** What an open cursor reads from. A tailable source (change stream) may have more later. */
export interface CursorSource {
  next(): IteratorResult<Uint8Array>
  /** Tailable sources: resolves when new data may be available, or after `ms`. */
  waitForData?(ms: number): Promise<void>
  /** Extra fields of every cursor reply (postBatchResumeToken). */
  replyFields?(): Doc
  /** Tailable sources: true once nothing more will ever come (an invalidated change stream). */
  exhausted?(): boolean
  close?(): void
}

interface OpenCursor {
  id: number
  ns: string
  source: CursorSource
  pending: Uint8Array | undefined
  lastUsed: number
  /** One getMore at a time; a second one meanwhile is an error, as in mongod. */
  busy: boolean
}

const DEFAULT_FIRST_BATCH = 101
/** Replies stay under the 16 MB document limit with room for the envelope. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024 - 64 * 1024
const IDLE_TIMEOUT_MS = 10 * 60 * 1000

/** Which of `threads` command threads made a cursor: its id modulo their number (see CursorRegistry). */
export function cursorOwner(id: number, threads: number): number {
  return id % threads
}

export class CursorRegistry {
  private readonly cursors = new Map<number, OpenCursor>()
  private nextId: number
  private readonly sweeper: NodeJS.Timeout

  /**
   * When several threads serve commands (the writer and the readers), each keeps its own cursors:
   * thread `owner` of `threads` hands out the ids equal to `owner` modulo `threads`, so that a
   * getMore can be sent to the thread that has the cursor.
   */
  constructor(
    owner = 0,
    private readonly threads = 1,
  ) {
    this.nextId = owner === 0 ? threads : owner
    this.sweeper = setInterval(() => this.sweep(), 60_000)
    this.sweeper.unref()
  }

  /** Pulls up to `max` documents (and at most 16 MB), looking one ahead to know if it is done. */
  private static take(
    source: CursorSource,
    pending: Uint8Array | undefined,
    max: number,
  ): { batch: Uint8Array[]; pending?: Uint8Array; done: boolean } {
    const batch: Uint8Array[] = []
    let bytes = 0
    let next = pending
    for (;;) {
      if (!next) {
        const item = source.next()
        if (item.done) return { batch, done: true }
        next = item.value
      }
      if (batch.length >= max || (batch.length > 0 && bytes + next.length > MAX_BATCH_BYTES))
        return { batch, pending: next, done: false }
      batch.push(next)
      bytes += next.length
      next = undefined
    }
  }

  /** The first batch of a new cursor, registering the cursor if more may follow. */
  open(ns: string, source: CursorSource, batchSize: number | undefined, singleBatch = false): Buffer {
    const max = batchSize === undefined ? DEFAULT_FIRST_BATCH : batchSize
    const { batch, pending, done } = CursorRegistry.take(source, undefined, max)
    const tailable = source.waitForData !== undefined && !source.exhausted?.()
    let id = 0
    if ((!done || tailable) && !singleBatch) {
      id = this.nextId
      this.nextId += this.threads
      this.cursors.set(id, { id, ns, source, pending, lastUsed: Date.now(), busy: false })
    } else {
      source.close?.()
    }
    return cursorReply('firstBatch', batch, id, ns, source.replyFields?.() ?? {})
  }

  async getMore(id: number, ns: string, batchSize: number | undefined, maxTimeMS: number | undefined): Promise<Buffer> {
    const cursor = this.cursors.get(id)
    if (!cursor) throw mongoError('CursorNotFound', `cursor id ${id} not found`)
    if (cursor.ns !== ns) {
      throw mongoError(
        'Unauthorized',
        `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`,
      )
    }
    if (cursor.busy) throw mongoError('CursorInUse', `Cursor id ${id} is already in use`)
    cursor.busy = true
    try {
      const max = batchSize && batchSize > 0 ? batchSize : Number.MAX_SAFE_INTEGER
      let taken = CursorRegistry.take(cursor.source, cursor.pending, max)
      // as MongoDB's awaitData: answered when there is something to send or the time is up, not at
      // each change of the server (a change stream's filter may leave nothing), so that a waiting
      // client does not send a getMore per write
      const deadline = Date.now() + (maxTimeMS ?? 1000)
      while (
        taken.batch.length === 0 &&
        cursor.source.waitForData &&
        !cursor.source.exhausted?.() &&
        this.cursors.has(id) &&
        Date.now() < deadline
      ) {
        await cursor.source.waitForData(deadline - Date.now())
        taken = CursorRegistry.take(cursor.source, undefined, max)
      }
      cursor.pending = taken.pending
      cursor.lastUsed = Date.now()
      const tailing = cursor.source.waitForData !== undefined && !cursor.source.exhausted?.()
      const finished = (taken.done && !tailing) || !this.cursors.has(id)
      if (finished) this.kill(id)
      return cursorReply('nextBatch', taken.batch, finished ? 0 : id, ns, cursor.source.replyFields?.() ?? {})
    } finally {
      cursor.busy = false
    }
  }

  kill(id: number): boolean {
    const cursor = this.cursors.get(id)
    if (!cursor) return false
    this.cursors.delete(id)
    cursor.source.close?.()
    return true
  }

  get size(): number {
    return this.cursors.size
  }

  private sweep(): void {
    const limit = Date.now() - IDLE_TIMEOUT_MS
    for (const cursor of [...this.cursors.values()]) if (cursor.lastUsed < limit && !cursor.busy) this.kill(cursor.id)
  }

  close(): void {
    clearInterval(this.sweeper)
    for (const id of [...this.cursors.keys()]) this.kill(id)
  }
}
