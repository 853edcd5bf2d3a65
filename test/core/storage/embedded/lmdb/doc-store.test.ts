import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { LmdbEnvironment } from '../../../../../core/storage/embedded/lmdb/environment.ts'
import { LmdbDocStore } from '../../../../../core/storage/embedded/lmdb/doc-store.ts'

describe('lmdb document store', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-lmdb-docs-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

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
})
