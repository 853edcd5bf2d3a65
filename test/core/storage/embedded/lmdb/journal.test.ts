import { expect } from 'chai'
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { CommitRecorder, recordOps, recordSeq } from '../../../../../core/storage/embedded/lmdb/commit-ops.ts'
import { CommitJournal } from '../../../../../core/storage/embedded/lmdb/journal.ts'
import { folderPerTest } from '../../../../helpers/folders.ts'

const recorder = new CommitRecorder(1024 * 1024)

/** A transaction's body: one put whose value names it. */
function body(seq: number): Buffer {
  recorder.put(0, Buffer.from('key'), Buffer.from(`commit ${seq}`))
  return Buffer.from(recorder.take(seq) as Buffer)
}

function append(journal: CommitJournal, ...seqs: number[]): void {
  for (const seq of seqs) journal.append(seq, journal.frame(body(seq)))
}

/** What a replay after `afterSeq` redoes, by the values of its puts. */
function replayed(dir: string, afterSeq: number): { applied: string[]; last: number } {
  const applied: string[] = []
  const last = CommitJournal.open(dir).replay(afterSeq, (b) => {
    for (const op of recordOps(b)) applied.push(`${recordSeq(b)}:${op.value!.toString()}`)
  })
  return { applied, last }
}

const journalFiles = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('journal-'))

describe('lmdb journal', () => {
  let dir: string
  folderPerTest('hedgerow-journal-', (folder) => (dir = folder))

  it('replays, across files and in order, the records after a sequence number', async () => {
    const journal = CommitJournal.open(dir)
    journal.start()
    append(journal, 1, 2, 3)
    journal.rotate()
    append(journal, 4, 5)
    await journal.sync()
    expect(journalFiles(dir)).to.have.length(2)
    expect(replayed(dir, 0)).to.deep.equal({
      applied: ['1:commit 1', '2:commit 2', '3:commit 3', '4:commit 4', '5:commit 5'],
      last: 5,
    })
    expect(replayed(dir, 3)).to.deep.equal({ applied: ['4:commit 4', '5:commit 5'], last: 5 })
    expect(replayed(dir, 5)).to.deep.equal({ applied: [], last: 5 })
    await journal.close()
  })

  it('stops at the first missing sequence number (a transaction made durable by a checkpoint instead)', async () => {
    const journal = CommitJournal.open(dir)
    journal.start()
    append(journal, 1, 2, 4, 5)
    await journal.sync()
    expect(replayed(dir, 0)).to.deep.equal({ applied: ['1:commit 1', '2:commit 2'], last: 2 })
    // from a checkpoint holding 3, the rest follows on
    expect(replayed(dir, 3)).to.deep.equal({ applied: ['4:commit 4', '5:commit 5'], last: 5 })
    await journal.close()
  })

  it('stops at a record torn by a power cut, and at one whose bytes changed', async () => {
    const journal = CommitJournal.open(dir)
    journal.start()
    append(journal, 1, 2)
    await journal.sync()
    const file = path.join(dir, journalFiles(dir)[0]!)
    appendFileSync(file, journal.frame(body(3)).subarray(0, 20))
    expect(replayed(dir, 0).last).to.equal(2)
    const bytes = readFileSync(file)
    const length = journal.frame(body(2)).length
    bytes[length + length - 3] ^= 0xff // inside record 2's value
    writeFileSync(file, bytes)
    expect(replayed(dir, 0)).to.deep.equal({ applied: ['1:commit 1'], last: 1 })
    await journal.close()
  })

  it('deletes the files found at open when started, then the files a checkpoint holds; the current file stays', async () => {
    const first = CommitJournal.open(dir)
    first.start()
    append(first, 1, 2)
    await first.sync()
    const found = journalFiles(dir)
    const journal = CommitJournal.open(dir)
    journal.start()
    expect(journalFiles(dir).some((name) => found.includes(name))).to.equal(false)
    append(journal, 3)
    journal.rotate()
    append(journal, 4)
    journal.rotate()
    append(journal, 5)
    await journal.sync()
    expect(journalFiles(dir)).to.have.length(3)
    await journal.dropThrough(4)
    expect(journalFiles(dir)).to.have.length(1)
    expect(replayed(dir, 4).applied).to.deep.equal(['5:commit 5'])
    journal.rotate()
    await journal.dropThrough(5)
    await journal.close()
    expect(journalFiles(dir), 'a closed empty file is deleted').to.deep.equal([])
    await first.close()
  })

  it('counts what it holds as dirty until synced', async () => {
    const journal = CommitJournal.open(dir)
    journal.start()
    expect(journal.dirty).to.equal(false)
    append(journal, 1)
    expect(journal.dirty).to.equal(true)
    expect(journal.bytes).to.equal(journal.frame(body(1)).length)
    await journal.sync()
    expect(journal.dirty).to.equal(false)
    journal.rotate()
    expect(journal.dirty, "the new file's name is not yet on the disk").to.equal(true)
    await journal.sync()
    expect(journal.dirty).to.equal(false)
    await journal.close()
  })
})
