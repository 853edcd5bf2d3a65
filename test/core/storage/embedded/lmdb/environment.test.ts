import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { LmdbEnvironment } from '../../../../../core/storage/embedded/lmdb/environment.ts'

describe('lmdb environment transactions', () => {
  let dir: string
  let env: LmdbEnvironment
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-lmdb-env-'))
    env = LmdbEnvironment.open(dir, { compression: false })
  })
  afterEach(async () => {
    await env.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('commits what a failing command wrote before its error, as the catalog in memory keeps it', async () => {
    const key = Buffer.from('k1')
    expect(() =>
      env.transact(() => {
        env.meta.putSync(key, Buffer.from('v'))
        throw new Error('second document refused')
      }),
    ).to.throw('second document refused')
    expect(env.meta.getBinary(key)?.toString()).to.equal('v')
    const key2 = Buffer.from('k2')
    await env
      .transact(async () => {
        env.meta.putSync(key2, Buffer.from('w'))
        throw new Error('async refusal')
      })
      .then(
        () => expect.fail('should reject'),
        (error: Error) => expect(error.message).to.equal('async refusal'),
      )
    expect(env.meta.getBinary(key2)?.toString()).to.equal('w')
  })

  it('writes the counters a transaction touched once, before it commits', () => {
    let flushed = 0
    const store = {
      flush: () => {
        flushed += 1
      },
    }
    env.transact(() => {
      env.touched(store)
      env.touched(store)
    })
    expect(flushed).to.equal(1)
  })
})
