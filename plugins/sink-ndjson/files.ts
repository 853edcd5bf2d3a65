/**
 * The files sink-ndjson writes: one open at a time, named by the time it was opened so names sort
 * chronologically, replaced by a new one when the next write would pass the size limit or the
 * time period (aligned to multiples of `rotateEveryMs` since the epoch, e.g. whole hours) is over.
 * Every append is fsynced before it resolves; an append that fails is cut back off the file, so a
 * failed write never leaves half a line for the next one to continue.
 */
import { mkdir, open, stat } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import path from 'node:path'

export interface RotationOptions {
  readonly dir: string
  readonly prefix: string
  readonly maxFileBytes: number
  readonly rotateEveryMs: number
}

interface OpenFile {
  readonly handle: FileHandle
  readonly file: string
  readonly period: number
  bytes: number
}

const MAX_NAME_ATTEMPTS = 1000

function stamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
}

export class RotatingFiles {
  private current?: OpenFile

  constructor(
    private readonly options: RotationOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** The file being written, if one is open. */
  get currentFile(): string | undefined {
    return this.current?.file
  }

  /** Appends `text` (whole lines) to the current file, rotating first when due, and fsyncs it. */
  async append(text: string): Promise<void> {
    const data = Buffer.from(text)
    const file = await this.fileFor(data.length)
    const before = file.bytes
    try {
      await file.handle.appendFile(data)
      await file.handle.datasync()
      file.bytes += data.length
    } catch (error) {
      // After a failed write or fsync the file's state is unknown: cut it back and never reuse it.
      await file.handle.truncate(before).catch(() => undefined)
      await this.closeCurrent().catch(() => undefined)
      throw error
    }
  }

  /** Closes the current file once its period is over, so an idle hour still gets its own file. */
  async rotateIfDue(): Promise<void> {
    if (this.current && this.current.period !== this.period()) await this.closeCurrent()
  }

  async close(): Promise<void> {
    await this.closeCurrent()
  }

  private period(): number {
    return Math.floor(this.now() / this.options.rotateEveryMs)
  }

  private async fileFor(length: number): Promise<OpenFile> {
    const current = this.current
    if (current) {
      const full = current.bytes > 0 && current.bytes + length > this.options.maxFileBytes
      const gone = await this.movedAway(current)
      if (!full && !gone && current.period === this.period()) return current
      await this.closeCurrent()
    }
    return (this.current = await this.openNext())
  }

  /** The file was deleted or moved away under us (log shipping, an operator): start a new one. */
  private async movedAway(current: OpenFile): Promise<boolean> {
    const [open, named] = await Promise.all([current.handle.stat(), stat(current.file).catch(() => undefined)])
    return open.nlink === 0 || named?.ino !== open.ino || named.dev !== open.dev
  }

  private async openNext(): Promise<OpenFile> {
    const { dir, prefix } = this.options
    await mkdir(dir, { recursive: true })
    const opened = this.now()
    for (let seq = 0; seq < MAX_NAME_ATTEMPTS; seq++) {
      const file = path.join(dir, `${prefix}-${stamp(opened)}-${String(seq).padStart(3, '0')}.ndjson`)
      try {
        const handle = await open(file, 'ax')
        await this.syncDir()
        return { handle, file, period: Math.floor(opened / this.options.rotateEveryMs), bytes: 0 }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
    }
    throw new Error(
      `sink-ndjson: ${MAX_NAME_ATTEMPTS} files named ${prefix}-${stamp(opened)}-* already exist in ${dir}`,
    )
  }

  /** Makes the new file's directory entry durable too, not only its content. */
  private async syncDir(): Promise<void> {
    const handle = await open(this.options.dir, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  }

  private async closeCurrent(): Promise<void> {
    const current = this.current
    this.current = undefined
    await current?.handle.close()
  }
}
