import { expect } from 'chai'
import { encode, type Doc } from '../../../../../core/storage/embedded/bson/codec.ts'
import { Collection, type MutationSink } from '../../../../../core/storage/embedded/engine/collection.ts'
import { MEMORY_BACKEND, type IndexEntries } from '../../../../../core/storage/embedded/engine/doc-store.ts'
import { encodeKey } from '../../../../../core/storage/embedded/engine/key-encoding.ts'

const QUIET: MutationSink = { inserted() {}, replaced() {}, deleted() {} }

/** A collection whose index entries count the writes and key lookups they receive (an on-disk store pays per call). */
function countingCollection(): { coll: Collection; writes: { count: number }; lookups: { count: number } } {
  const writes = { count: 0 }
  const lookups = { count: 0 }
  const base = MEMORY_BACKEND.newCollection()
  const storage = {
    docs: base.docs,
    newIndexEntries(unique: boolean): IndexEntries {
      const entries = base.newIndexEntries(unique)
      return {
        insert(key, id) {
          writes.count += 1
          entries.insert(key, id)
        },
        claim(key, id) {
          writes.count += 1
          return entries.claim(key, id)
        },
        delete(key, id) {
          writes.count += 1
          return entries.delete(key, id)
        },
        idsWithKey(key) {
          lookups.count += 1
          return entries.idsWithKey(key)
        },
        collectKey(key, out) {
          lookups.count += 1
          entries.collectKey(key, out)
        },
        range: (lo, hi, descending) => entries.range(lo, hi, descending),
        load: (list) => entries.load(list),
        check: (key, id) => entries.check(key, id),
        clear: () => entries.clear(),
      }
    },
  }
  return { coll: new Collection('app', 'persons', QUIET, undefined, {}, storage), writes, lookups }
}

function update(coll: Collection, before: Doc, after: Doc): void {
  coll.replace(before, after, encode(after), 'update')
}

describe('embedded MongoDB collection: index maintenance on update', () => {
  it('leaves the entries of an index whose fields did not change untouched', () => {
    const { coll, writes } = countingCollection()
    coll.addIndex({ v: 2, key: { distinct_id: 1 }, name: 'distinct_id_1', unique: true })
    const before = { _id: 1, distinct_id: 'a', seen: 1 }
    coll.insert(encode(before), before)
    writes.count = 0
    update(coll, before, { _id: 1, distinct_id: 'a', seen: 2 })
    expect(writes.count).to.equal(0)
    expect(
      coll.index('distinct_id_1')?.entries.idsWithKey(coll.index('distinct_id_1')!.keysOf(before)[0].key),
    ).to.have.length(1)
  })

  it('moves the entry of an index whose fields changed', () => {
    const { coll, writes } = countingCollection()
    coll.addIndex({ v: 2, key: { distinct_id: 1 }, name: 'distinct_id_1', unique: true })
    const before = { _id: 1, distinct_id: 'a' }
    const after = { _id: 1, distinct_id: 'b' }
    coll.insert(encode(before), before)
    writes.count = 0
    update(coll, before, after)
    expect(writes.count).to.equal(2)
    const ix = coll.index('distinct_id_1')!
    expect(ix.entries.idsWithKey(ix.keysOf(before)[0].key)).to.deep.equal([])
    expect(ix.entries.idsWithKey(ix.keysOf(after)[0].key)).to.have.length(1)
  })

  it('checks a unique index for duplicates only when the update changes its key', () => {
    const { coll, lookups } = countingCollection()
    coll.addIndex({ v: 2, key: { distinct_id: 1 }, name: 'distinct_id_1', unique: true })
    const first = { _id: 1, distinct_id: 'a', seen: 1 }
    const second = { _id: 2, distinct_id: 'b' }
    coll.insert(encode(first), first)
    coll.insert(encode(second), second)
    lookups.count = 0
    const seen = { ...first, seen: 2 }
    update(coll, first, seen)
    expect(lookups.count).to.equal(0)
    expect(() => update(coll, seen, { ...seen, distinct_id: 'b' })).to.throw(
      /E11000 .* dup key: \{ distinct_id: "b" \}/,
    )
    expect(lookups.count).to.equal(1)
    expect(
      coll.get(coll.index('distinct_id_1')!.entries.idsWithKey(coll.index('distinct_id_1')!.keysOf(seen)[0].key)[0]),
    ).to.deep.equal(seen)
  })

  it('inserts without looking a unique key up first, and takes back what a taken key left', () => {
    const { coll, lookups } = countingCollection()
    coll.addIndex({ v: 2, key: { distinct_id: 1 }, name: 'distinct_id_1', unique: true })
    coll.addIndex({ v: 2, key: { email: 1 }, name: 'email_1', unique: true })
    const first = { _id: 1, distinct_id: 'a', email: 'a@x' }
    coll.insert(encode(first), first)
    expect(lookups.count).to.equal(0)
    const clash = { _id: 2, distinct_id: 'b', email: 'a@x' }
    expect(() => coll.insert(encode(clash), clash)).to.throw(/E11000 .* index: email_1 /)
    const distinct = coll.index('distinct_id_1')!
    expect(distinct.entries.idsWithKey(distinct.keysOf(clash)[0].key)).to.deep.equal([])
    expect([coll.size, coll.has(encodeKey(2))]).to.deep.equal([1, false])
    expect(() => coll.insert(encode(first), first)).to.throw(/E11000 .* index: _id_ /)
    expect(coll.size).to.equal(1)
  })
})
