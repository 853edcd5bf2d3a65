import { expect } from 'chai'
import { CommitRecorder, OP, recordOps, recordSeq } from '../../../../../core/storage/embedded/lmdb/commit-ops.ts'

const bytes = (text: string) => Buffer.from(text, 'latin1')

describe('lmdb commit record', () => {
  it("keeps a transaction's puts and removes in order, under its sequence number", () => {
    const recorder = new CommitRecorder(1024 * 1024)
    expect(recorder.empty).to.equal(true)
    recorder.put(0, bytes('doc-key'), bytes('document'))
    recorder.remove(2, bytes('entry'))
    recorder.put(3, bytes('meta'), Buffer.alloc(0))
    expect(recorder.empty).to.equal(false)
    const record = Buffer.from(recorder.take(7) as Buffer)
    expect(recordSeq(record)).to.equal(7)
    const ops = [...recordOps(record)].map((op) => ({
      store: op.store,
      kind: op.kind,
      key: op.key.toString('latin1'),
      value: op.value?.toString('latin1'),
    }))
    expect(ops).to.deep.equal([
      { store: 0, kind: OP.put, key: 'doc-key', value: 'document' },
      { store: 2, kind: OP.remove, key: 'entry', value: undefined },
      { store: 3, kind: OP.put, key: 'meta', value: '' },
    ])
    expect(recorder.empty).to.equal(true)
  })

  it('grows past its first buffer, and copies what it is given (callers reuse their buffers)', () => {
    const recorder = new CommitRecorder(64 * 1024 * 1024)
    const value = Buffer.alloc(1000)
    for (let i = 0; i < 500; i++) {
      value.fill(i % 256)
      recorder.put(1, bytes(`k${i}`), value)
    }
    const ops = [...recordOps(recorder.take(1) as Buffer)]
    expect(ops).to.have.length(500)
    ops.forEach((op, i) => {
      expect(op.key.toString('latin1')).to.equal(`k${i}`)
      expect(op.value!.every((b) => b === i % 256)).to.equal(true)
    })
  })

  it('says a transaction larger than its limit overflowed, and records the next one whole', () => {
    const recorder = new CommitRecorder(10_000)
    for (let i = 0; i < 20; i++) recorder.put(0, bytes(`k${i}`), Buffer.alloc(1000))
    expect(recorder.empty).to.equal(false)
    expect(recorder.take(1)).to.equal('overflowed')
    recorder.put(0, bytes('small'), bytes('v'))
    const record = recorder.take(2) as Buffer
    expect(recordSeq(record)).to.equal(2)
    expect([...recordOps(record)]).to.have.length(1)
  })

  it('forgets a discarded transaction', () => {
    const recorder = new CommitRecorder(1024)
    recorder.put(0, bytes('k'), bytes('v'))
    recorder.discard()
    expect(recorder.empty).to.equal(true)
    expect([...recordOps(recorder.take(3) as Buffer)]).to.have.length(0)
  })
})
