import { closeSync, fdatasync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs'
import { FILE_MODE } from './data-dir.ts'

/**
 * Appends records to one log file. `flush()` hands the pending records to the kernel with one
 * write(2): from then on they survive the death of this process (kill -9). `sync()` makes them
 * survive a power cut too (fdatasync); concurrent callers share one fdatasync (group commit).
 */
export class LogWriter {
  private pending: Buffer[] = []
  private pendingBytes = 0
  private written: number
  private synced: number
  private syncing: Promise<void> | undefined
  private fd: number | undefined

  constructor(
    readonly path: string,
    validLength?: number,
  ) {
    this.fd = openSync(path, 'a+', FILE_MODE)
    if (validLength !== undefined && fstatSync(this.fd).size > validLength) ftruncateSync(this.fd, validLength)
    this.written = fstatSync(this.fd).size
    this.synced = this.written
  }

  /** Bytes in the file, flushed or not. */
  get size(): number {
    return this.written + this.pendingBytes
  }

  get hasPending(): boolean {
    return this.pendingBytes > 0
  }

  get dirty(): boolean {
    return this.synced < this.written
  }

  append(record: Buffer): void {
    this.pending.push(record)
    this.pendingBytes += record.length
  }

  /** Writes pending records to the file (synchronously: the reply to the client follows). */
  flush(): void {
    if (this.pendingBytes === 0) return
    if (this.fd === undefined) throw new Error(`log ${this.path} is closed`)
    const data = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes)
    this.pending = []
    this.pendingBytes = 0
    let offset = 0
    while (offset < data.length) offset += writeSync(this.fd, data, offset, data.length - offset)
    this.written += data.length
  }

  /** Flushes, then waits until everything written so far is on stable storage. */
  async sync(): Promise<void> {
    this.flush()
    const target = this.written
    while (this.synced < target) {
      if (!this.syncing) {
        const upTo = this.written
        const fd = this.fd
        if (fd === undefined) return
        this.syncing = new Promise<void>((resolve, reject) => {
          fdatasync(fd, (error) => {
            this.syncing = undefined
            if (error) reject(error)
            else {
              this.synced = Math.max(this.synced, upTo)
              resolve()
            }
          })
        })
      }
      await this.syncing
    }
  }

  async close(): Promise<void> {
    await this.sync()
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}
