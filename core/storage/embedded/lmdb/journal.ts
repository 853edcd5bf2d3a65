import { readdirSync, unlinkSync } from 'node:fs'
import { unlink } from 'node:fs/promises'
import path from 'node:path'
import { syncFolder, syncFolderSync } from '../persistence/data-dir.ts'
import { LogWriter } from '../persistence/log-writer.ts'
import { encodeRecord, readRecordFile, RecordOp } from '../persistence/records.ts'
import { recordSeq } from './commit-ops.ts'

const FILE = /^journal-(\d{12})$/

interface JournalFile {
  readonly writer: LogWriter
  /** The highest sequence number in the file (0: none yet). */
  maxSeq: number
  /** Its name is on the disk (the folder was fsynced after it was made). */
  named: boolean
}

/**
 * The journal of the lmdb environment: each committed write transaction's puts and removes
 * (commit-ops.ts), appended after its commit under a sequence number that the transaction also
 * stores in the file. A write asking for j: true is answered once its record is fdatasynced: one
 * short sequential write, where making the commit itself durable (a checkpoint) writes every page
 * it touched, scattered over the data file. Checkpoints then run in the background; each starts a
 * new journal file, and the files whose records all precede a checkpoint on the disk are deleted.
 * After a power cut the data file opens at its last checkpoint, and the records after the
 * sequence number stored there are replayed, in order, up to the first missing one.
 */
export class CommitJournal {
  private files: JournalFile[] = []
  private nextNumber: number

  private constructor(
    private readonly dir: string,
    /** The files found at open: replayed, then deleted once a checkpoint holds what they hold. */
    private found: string[],
  ) {
    const last = found.at(-1)
    this.nextNumber = last ? Number(FILE.exec(path.basename(last))![1]) + 1 : 1
  }

  static open(dir: string): CommitJournal {
    const found = readdirSync(dir)
      .filter((name) => FILE.test(name))
      .sort()
      .map((name) => path.join(dir, name))
    return new CommitJournal(dir, found)
  }

  /**
   * Calls `apply` with each record of the files found at open whose sequence number follows
   * `afterSeq`, in order, and stops at the first gap (a transaction too large to journal, made
   * durable by a checkpoint that did not reach the disk) or torn record. Returns the last applied.
   */
  replay(afterSeq: number, apply: (body: Uint8Array) => void): number {
    let last = afterSeq
    let stopped = false
    for (const file of this.found) {
      if (stopped) break
      readRecordFile(file, (record) => {
        if (stopped || record.op !== RecordOp.lmdbCommit) return
        const seq = recordSeq(record.body)
        if (seq <= last) return
        if (seq !== last + 1) {
          stopped = true
          return
        }
        apply(record.body)
        last = seq
      })
    }
    return last
  }

  /**
   * Deletes the files found at open (call once a checkpoint on the disk holds their records) and
   * starts the journal on a new file.
   */
  start(): void {
    for (const file of this.found) unlinkSync(file)
    this.found = []
    this.newFile()
    syncFolderSync(this.dir)
    this.current.named = true
  }

  get started(): boolean {
    return this.files.length > 0
  }

  private get current(): JournalFile {
    return this.files[this.files.length - 1]!
  }

  private newFile(): void {
    const name = path.join(this.dir, `journal-${String(this.nextNumber++).padStart(12, '0')}`)
    this.files.push({ writer: new LogWriter(name), maxSeq: 0, named: false })
  }

  /** A transaction's record as the file holds it (a copy of `body`). */
  frame(body: Uint8Array): Buffer {
    return encodeRecord(RecordOp.lmdbCommit, '', body)
  }

  /** Adds a committed transaction's framed record (written to the file at the next sync). */
  append(seq: number, record: Buffer): void {
    this.current.writer.append(record)
    this.current.maxSeq = seq
  }

  /** Bytes in the current file: a checkpoint is due when they grow large (replay time). */
  get bytes(): number {
    return this.started ? this.current.writer.size : 0
  }

  get dirty(): boolean {
    return this.files.some((f) => f.writer.hasPending || f.writer.dirty || !f.named)
  }

  /** Every record appended so far on the disk (group commit: callers share fdatasyncs). */
  async sync(): Promise<void> {
    const files = [...this.files]
    const unnamed = files.filter((f) => !f.named)
    await Promise.all(files.map((f) => f.writer.sync()))
    if (!unnamed.length) return
    await syncFolder(this.dir)
    for (const f of unnamed) f.named = true
  }

  /** Begins a new file (at a checkpoint's start), unless the current one holds nothing. */
  rotate(): void {
    if (this.started && this.current.maxSeq > 0) this.newFile()
  }

  /** Deletes the earlier files whose records all precede `seq` (held by a checkpoint on the disk). */
  async dropThrough(seq: number): Promise<void> {
    const keep: JournalFile[] = []
    for (const file of this.files) {
      if (file === this.current || file.maxSeq > seq) {
        keep.push(file)
        continue
      }
      await file.writer.close()
      // from the thread pool: unlinking megabytes of file frees its blocks, which takes a while
      await unlink(file.writer.path)
    }
    this.files = keep
  }

  /** Closes the files; one holding no record is deleted (after a last checkpoint, that is all of them). */
  async close(): Promise<void> {
    for (const file of this.files) {
      await file.writer.close()
      if (file.maxSeq === 0) unlinkSync(file.writer.path)
    }
    this.files = []
  }
}
