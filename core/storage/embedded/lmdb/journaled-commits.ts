import { CommitRecorder, OP, recordOps } from './commit-ops.ts'
import type { BinaryDb } from './environment.ts'
import { CommitJournal } from './journal.ts'

/** The meta key holding the sequence number of the last journaled transaction. */
const JOURNAL_SEQ = Buffer.from('journal-seq', 'latin1')
/**
 * A transaction whose record would be larger is not journaled (an update of many large
 * documents, the drop of a large collection): its commit is made durable by a checkpoint instead.
 */
const MAX_RECORD_BYTES = 16 * 1024 * 1024

/** One write transaction's journal record, sealed before its commit and appended after it. */
export interface Sealed {
  seq: number
  record: Buffer | 'overflowed' | undefined
}

/**
 * The environment's side of the journal (journal.ts): records the puts and removes made through
 * the four stores, gives each write transaction a sequence number stored in the same transaction,
 * appends its record once it is committed, and redoes the records a file opened at a checkpoint
 * lacks.
 */
export class JournaledCommits {
  private readonly recorder = new CommitRecorder(MAX_RECORD_BYTES)
  private readonly journal: CommitJournal
  /** Transactions are journaled once started (after the first checkpoint). */
  private journaling = false
  /** The sequence number of the last transaction given one, and of the last one committed. */
  private seq = 0
  private committedSeq = 0
  /** The newest transaction left out of the journal (too large), and the newest a checkpoint holds. */
  private unjournaledSeq = 0
  private checkpointedSeq = 0

  /** `stores`: docs, natural, entries, meta, in the order records number them. */
  constructor(
    dir: string,
    private readonly stores: readonly BinaryDb[],
  ) {
    this.journal = CommitJournal.open(dir)
    stores.forEach((db, store) => this.recordWrites(db, store))
  }

  private get meta(): BinaryDb {
    return this.stores[3]!
  }

  /** The puts and removes made through `db` go to the transaction's record too. */
  private recordWrites(db: BinaryDb, store: number): void {
    type Put = (key: Buffer, value: Buffer, options?: object) => boolean
    const put = (db.putSync as unknown as Put).bind(db)
    const remove = (db.removeSync as unknown as (key: Buffer) => boolean).bind(db)
    Object.assign(db, {
      putSync: (key: Buffer, value: Buffer, options?: object) => {
        const done = put(key, value, options)
        if (done !== false && this.journaling) this.recorder.put(store, key, value)
        return done
      },
      removeSync: (key: Buffer) => {
        const done = remove(key)
        if (done && this.journaling) this.recorder.remove(store, key)
        return done
      },
    })
  }

  private storedSeq(): number {
    return Number(this.meta.getBinary(JOURNAL_SEQ)?.readBigUInt64LE(0) ?? 0n)
  }

  /** Redoes, each in a transaction of `transact`, the records after the file as opened; returns how many. */
  replay(transact: (fn: () => void) => void): number {
    const from = this.storedSeq()
    const to = this.journal.replay(from, (body) =>
      transact(() => {
        for (const op of recordOps(body)) {
          const db = this.stores[op.store]!
          if (op.kind === OP.put) db.putSync(op.key, op.value!)
          else db.removeSync(op.key)
        }
      }),
    )
    return to - from
  }

  /** Journals every transaction from now on; call once a checkpoint on the disk holds the file as opened. */
  start(): void {
    this.journal.start()
    this.seq = this.committedSeq = this.checkpointedSeq = this.storedSeq()
    this.journaling = true
  }

  /** Gives the transaction under way its sequence number (stored with it) and its record. */
  seal(sealed: Sealed): void {
    if (!this.journaling || this.recorder.empty) return
    sealed.seq = ++this.seq
    const bytes = Buffer.allocUnsafe(8)
    bytes.writeBigUInt64LE(BigInt(sealed.seq))
    this.meta.putSync(JOURNAL_SEQ, bytes)
    const record = this.recorder.take(sealed.seq)
    sealed.record = record === 'overflowed' ? record : this.journal.frame(record)
  }

  /** After the transaction's commit: its record goes to the journal. */
  committed(sealed: Sealed): void {
    if (!sealed.seq) return
    if (sealed.record === 'overflowed') this.unjournaledSeq = sealed.seq
    else if (sealed.record) this.journal.append(sealed.seq, sealed.record)
    this.committedSeq = sealed.seq
  }

  /** The transaction's commit failed: its record is dropped. */
  discard(): void {
    this.recorder.discard()
  }

  /** Every commit so far on the disk: in the journal, or a checkpoint is needed (a transaction too large). */
  async sync(): Promise<'synced' | 'checkpoint needed'> {
    await this.journal.sync()
    return this.unjournaledSeq > this.checkpointedSeq ? 'checkpoint needed' : 'synced'
  }

  get dirty(): boolean {
    return this.journal.dirty
  }

  /** Bytes of journal since the last checkpoint began (what a replay would redo). */
  get bytes(): number {
    return this.journal.bytes
  }

  /** At a checkpoint's pin: a new file begins; returns what the checkpoint will hold. */
  checkpointBegins(): number {
    this.journal.rotate()
    // a commit whose record is not yet appended counts as after the pin: its file is kept
    return this.committedSeq
  }

  /** The checkpoint holding `seq` is on the disk: the files it makes needless go. */
  async checkpointed(seq: number): Promise<void> {
    this.checkpointedSeq = Math.max(this.checkpointedSeq, seq)
    await this.journal.dropThrough(seq)
  }

  close(): Promise<void> {
    return this.journal.close()
  }
}
