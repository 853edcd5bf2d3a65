import { expect } from 'chai'
import { LmdbEnvironment } from '../../../../../core/storage/embedded/lmdb/environment.ts'
import { LmdbDocStore } from '../../../../../core/storage/embedded/lmdb/doc-store.ts'
import { folderPerTest } from '../../../../helpers/folders.ts'

/** Counts the document store's B-tree reads from now on (lmdb-js's getBinaryFast, which it reads with). */
function countReads(env: LmdbEnvironment): { count: number } {
  const reads = { count: 0 }
  const getBinaryFast = env.docs.getBinaryFast.bind(env.docs)
  env.docs.getBinaryFast = (key) => {
    reads.count += 1
    return getBinaryFast(key)
  }
  return reads
}

describe('lmdb document store', () => {
  let dir: string
  folderPerTest('hedgerow-lmdb-docs-', (folder) => (dir = folder))

  it('keeps insertion order, replaced documents in place, and its counters across a reopen', async () => {
    let env = LmdbEnvironment.open(dir, { compression: false })
    const docs = new LmdbDocStore(env, 2)
    env.transact(() => {
      docs.put('b', Buffer.alloc(100, 1))
      docs.put('a', Buffer.alloc(5000, 2)) // larger than lmdb's shared read buffer
      docs.put('c', Buffer.alloc(10, 3))
      docs.put('b', Buffer.alloc(300, 4))
      docs.delete('c')
    })
    expect([...docs.ids()]).to.deep.equal(['b', 'a'])
    expect([...docs.ids(true)]).to.deep.equal(['a', 'b'])
    expect([docs.size, docs.dataBytes]).to.deep.equal([2, 5300])
    expect(docs.raw('b')).to.deep.equal(Buffer.alloc(300, 4))
    await env.close()
    env = LmdbEnvironment.open(dir, { compression: false })
    const reopened = new LmdbDocStore(env, 2)
    expect([reopened.size, reopened.dataBytes]).to.deep.equal([2, 5300])
    env.transact(() => reopened.put('d', Buffer.alloc(1, 5)))
    expect([...reopened.ids()]).to.deep.equal(['b', 'a', 'd'])
    await env.close()
  })

  it('stores documents of every size intact though it writes them through one reused buffer', async () => {
    const env = LmdbEnvironment.open(dir, { compression: true })
    const docs = new LmdbDocStore(env, 3)
    const sizes = [10, 70_000, 10, 2_000_000, 300_000, 5]
    const body = (size: number, i: number) => Buffer.alloc(size, i + 1)
    env.transact(() => {
      sizes.forEach((size, i) => {
        expect(docs.insert(`doc${i}`, body(size, i))).to.equal(true)
      })
      docs.put('doc1', body(80_000, 9))
      docs.delete('doc2')
    })
    expect([...docs.ids()]).to.deep.equal(['doc0', 'doc1', 'doc3', 'doc4', 'doc5'])
    for (const [id, expected] of [
      ['doc0', body(10, 0)],
      ['doc1', body(80_000, 9)],
      ['doc3', body(2_000_000, 3)],
      ['doc4', body(300_000, 4)],
      ['doc5', body(5, 5)],
    ] as const)
      expect(docs.raw(id)?.equals(expected), id).to.equal(true)
    await env.close()
  })

  it('writes its counters only in a transaction that changed them, and keeps them right across a reopen', async () => {
    let env = LmdbEnvironment.open(dir, { compression: false })
    const docs = new LmdbDocStore(env, 2)
    env.transact(() => docs.put('a', Buffer.alloc(100, 1)))
    const written: Buffer[] = []
    const putSync = env.meta.putSync.bind(env.meta)
    env.meta.putSync = (key, value) => {
      written.push(Buffer.from(key))
      return putSync(key, value)
    }
    env.transact(() => docs.put('a', Buffer.alloc(100, 2))) // same size: no counter changes
    expect(written).to.deep.equal([])
    env.transact(() => docs.put('a', Buffer.alloc(120, 3)))
    expect(written).to.have.length(1)
    env.transact(() => docs.put('a', Buffer.alloc(100, 4))) // back to a size written before, but not last
    expect(written).to.have.length(2)
    await env.close()
    env = LmdbEnvironment.open(dir, { compression: false })
    const reopened = new LmdbDocStore(env, 2)
    expect([reopened.size, reopened.dataBytes]).to.deep.equal([1, 100])
    await env.close()
  })

  it('reads an updated document once: its check and rewrite reuse what reading it found', async () => {
    const env = LmdbEnvironment.open(dir, { compression: false })
    const docs = new LmdbDocStore(env, 2)
    env.transact(() => {
      docs.put('a', Buffer.alloc(100, 1))
      docs.put('b', Buffer.alloc(50, 1))
    })
    const reads = countReads(env)
    env.transact(() => {
      expect(docs.raw('a')).to.deep.equal(Buffer.alloc(100, 1))
      expect(docs.has('a')).to.equal(true)
      docs.put('a', Buffer.alloc(120, 2))
    })
    expect(reads.count).to.equal(1)
    // what was read in an earlier transaction, or before a write, is read again
    env.transact(() => {
      expect(docs.has('a')).to.equal(true)
      docs.delete('a')
      expect(docs.has('a')).to.equal(false)
      docs.put('b', Buffer.alloc(70, 3))
    })
    expect(reads.count).to.equal(4)
    expect([docs.size, docs.dataBytes, [...docs.ids()]]).to.deep.equal([1, 70, ['b']])
    await env.close()
  })

  it('inserts a new document without reading first, and refuses a taken _id, changing nothing', async () => {
    const env = LmdbEnvironment.open(dir, { compression: false })
    const docs = new LmdbDocStore(env, 2)
    const reads = countReads(env)
    env.transact(() => {
      expect(docs.insert('a', Buffer.alloc(100, 1))).to.equal(true)
      expect(docs.insert('a', Buffer.alloc(40, 2))).to.equal(false)
      expect(docs.insert('b', Buffer.alloc(10, 3))).to.equal(true)
    })
    expect(reads.count).to.equal(0)
    expect([docs.size, docs.dataBytes, [...docs.ids()]]).to.deep.equal([2, 110, ['a', 'b']])
    expect(docs.raw('a')).to.deep.equal(Buffer.alloc(100, 1))
    await env.close()
  })
})
