/**
 * The buffer in front of the files. A durable write (a required sink) resolves only after its
 * lines are fsynced; concurrent durable writes share one write and one fsync (group commit). A
 * buffered write (an optional sink) resolves once queued and is flushed every `flushIntervalMs`
 * and at close. The buffer is bounded: when it is full because the disk keeps failing, new
 * writes are refused (the sink fails) instead of lines being lost unseen.
 */
import type { Logger } from 'pino'
import type { RotatingFiles } from './files.ts'

export interface WriterOptions {
  readonly flushIntervalMs: number
  readonly maxBufferBytes: number
}

interface Pending {
  readonly text: string
  readonly bytes: number
  /** Set for durable writes: settled when the flush that carries the text ends. */
  readonly waiter?: { resolve(): void; reject(error: unknown): void }
}

export class BufferFullError extends Error {
  constructor(bytes: number, limit: number) {
    super(
      `sink-ndjson: the write buffer holds ${bytes} bytes and takes at most ${limit}; the files could not be written`,
    )
    this.name = 'BufferFullError'
  }
}

export class NdjsonWriter {
  private pending: Pending[] = []
  private pendingBytes = 0
  private lastFlushFailed = false
  private chain: Promise<void> = Promise.resolve()
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly files: RotatingFiles,
    private readonly options: WriterOptions,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), options.flushIntervalMs)
    this.timer.unref()
  }

  /** Bytes waiting to be written. */
  get buffered(): number {
    return this.pendingBytes
  }

  write(text: string, durable: boolean): Promise<void> {
    const bytes = Buffer.byteLength(text)
    if (!durable) return this.writeBuffered(text, bytes)
    return new Promise<void>((resolve, reject) => {
      this.enqueue({ text, bytes, waiter: { resolve, reject } })
      void this.flush().catch(() => undefined)
    })
  }

  /**
   * A burst larger than the buffer waits for the flush in progress while the files are healthy;
   * the write is refused only when the buffer is still full or the last flush failed.
   */
  private async writeBuffered(text: string, bytes: number): Promise<void> {
    const fits = () => this.pendingBytes + bytes <= this.options.maxBufferBytes
    if (!fits() && !this.lastFlushFailed) await this.flush().catch(() => undefined)
    if (!fits()) throw new BufferFullError(this.pendingBytes + bytes, this.options.maxBufferBytes)
    this.enqueue({ text, bytes })
    if (this.pendingBytes * 2 >= this.options.maxBufferBytes) void this.flush().catch(() => undefined)
  }

  /** Writes and fsyncs everything queued so far; rejects when that write failed. */
  flush(): Promise<void> {
    const next = this.chain.then(() => this.flushOnce())
    this.chain = next.catch(() => undefined)
    return next
  }

  /** Stops the interval, flushes what is left and closes the file; reports what could not be written. */
  async close(): Promise<void> {
    clearInterval(this.timer)
    try {
      await this.flush()
    } catch (error) {
      this.logger.error(
        {
          err: error,
          lostBytes: this.pendingBytes,
          lostLines: this.pending.reduce((n, p) => n + countLines(p.text), 0),
        },
        'sink-ndjson could not write its buffer at shutdown; these events are lost',
      )
    } finally {
      await this.files.close()
    }
  }

  private enqueue(item: Pending): void {
    this.pending.push(item)
    this.pendingBytes += item.bytes
  }

  private async flushOnce(): Promise<void> {
    const batch = this.pending
    if (batch.length === 0) return this.files.rotateIfDue()
    this.pending = []
    this.pendingBytes = 0
    try {
      await this.files.append(batch.map((p) => p.text).join(''))
      this.lastFlushFailed = false
    } catch (error) {
      this.lastFlushFailed = true
      // Durable writers learn of the failure and their clients retry; buffered lines were
      // acknowledged already, so they stay queued, ahead of newer ones, for the next flush.
      const kept = batch.filter((p) => !p.waiter)
      this.pending = [...kept, ...this.pending]
      this.pendingBytes = this.pending.reduce((n, p) => n + p.bytes, 0)
      for (const p of batch) p.waiter?.reject(error)
      if (kept.length)
        this.logger.error(
          { err: error, bufferedBytes: this.pendingBytes },
          'sink-ndjson could not write; buffered events kept for the next flush',
        )
      throw error
    }
    for (const p of batch) p.waiter?.resolve()
  }
}

function countLines(text: string): number {
  let n = 0
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++
  return n
}
