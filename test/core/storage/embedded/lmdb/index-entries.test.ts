import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { SortedEntries } from '../../../../../core/storage/embedded/engine/sorted-entries.ts'
import { encodeKey, encodeKeys, KEY_MAX } from '../../../../../core/storage/embedded/engine/key-encoding.ts'
import { LmdbEnvironment } from '../../../../../core/storage/embedded/lmdb/environment.ts'
import { LmdbEntries } from '../../../../../core/storage/embedded/lmdb/index-entries.ts'

/** A small deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x80000000
  }
}

describe('lmdb index entries', () => {
  let dir: string
  let env: LmdbEnvironment
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-lmdb-entries-'))
    env = LmdbEnvironment.open(dir, { compression: false })
  })
  after(async () => {
    await env.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('answers ranges, key lookups and deletes exactly as the in-memory list does', () => {
    const rand = random(7)
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]
    const values = [null, 0, 1, -2.5, 'a', 'ab', 'é', '\ud83d\ude00', new Date(5), true, 'x\u0000y']
    const memory = new SortedEntries()
    const disk = new LmdbEntries(env, 10, false)
    const neighbour = new LmdbEntries(env, 12, false)
    env.transact(() => {
      neighbour.insert(encodeKey('a'), encodeKey(1))
      for (let i = 0; i < 600; i++) {
        const key = encodeKeys([pick(values), pick(values)])
        const id = encodeKey(Math.floor(rand() * 50))
        if (rand() < 0.2) expect(disk.delete(key, id)).to.equal(memory.delete(key, id))
        else {
          memory.insert(key, id)
          disk.insert(key, id)
        }
      }
    })
    for (let i = 0; i < 200; i++) {
      const a = encodeKey(pick(values))
      const b = encodeKey(pick(values))
      const [lo, hi] = a < b ? [a, b + KEY_MAX] : [b, a]
      for (const descending of [false, true]) {
        expect([...disk.range(lo, hi, descending)]).to.deep.equal([...memory.range(lo, hi, descending)])
      }
      const key = encodeKeys([pick(values), pick(values)])
      expect(disk.idsWithKey(key)).to.deep.equal(memory.idsWithKey(key))
    }
    expect([...disk.range('', KEY_MAX, false)].length).to.equal(memory.size)
  })

  it('sees entries written between the batches of a walk, as a cursor reading between writes does', () => {
    const disk = new LmdbEntries(env, 20, false)
    env.transact(() => {
      for (let i = 0; i < 300; i++) disk.insert(encodeKey(i), encodeKey(i))
    })
    const seen: unknown[] = []
    for (const entry of disk.range(encodeKey(0), encodeKey(1000), false)) {
      seen.push(entry.id)
      if (seen.length === 1) env.transact(() => disk.insert(encodeKey(500), encodeKey(500)))
    }
    expect(seen).to.have.length(301)
  })

  it('keeps a unique index as one _id per key: lookups, ranges and deletes as the in-memory list', () => {
    const memory = new SortedEntries()
    const disk = new LmdbEntries(env, 40, true)
    env.transact(() => {
      for (let i = 0; i < 300; i++) {
        memory.insert(encodeKey(`k${i}`), encodeKey(i))
        disk.insert(encodeKey(`k${i}`), encodeKey(i))
      }
      expect(disk.delete(encodeKey('k5'), encodeKey(6)), 'another document under that key').to.equal(false)
      expect(disk.delete(encodeKey('k5'), encodeKey(5))).to.equal(true)
      memory.delete(encodeKey('k5'), encodeKey(5))
    })
    expect(disk.idsWithKey(encodeKey('k7'))).to.deep.equal([encodeKey(7)])
    expect(disk.idsWithKey(encodeKey('k5'))).to.deep.equal([])
    for (const descending of [false, true]) {
      expect([...disk.range(encodeKey('k1'), encodeKey('k3') + KEY_MAX, descending)]).to.deep.equal([
        ...memory.range(encodeKey('k1'), encodeKey('k3') + KEY_MAX, descending),
      ])
    }
  })

  it('refuses a key longer than lmdb can store, before writing anything', () => {
    const disk = new LmdbEntries(env, 30, false)
    expect(() => disk.check(encodeKey('x'.repeat(5000)), encodeKey(1))).to.throw(/too large/)
  })
})
