import { expect } from 'chai'
import { SortedEntries, type Entry } from '../../../../../core/storage/embedded/engine/sorted-entries.ts'

/** A small deterministic generator, so failures reproduce. */
function random(seed: number): () => number {
  let s = seed
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    return s / 0x7fffffff
  }
}

const byKeyThenId = (a: Entry, b: Entry) =>
  a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

describe('SortedEntries', () => {
  it('keeps (key, id) pairs sorted through random inserts and deletes', () => {
    const next = random(7)
    const list = new SortedEntries()
    const reference = new Map<string, Entry>()
    for (let i = 0; i < 5000; i++) {
      const entry = { key: `k${Math.floor(next() * 300)}`, id: `i${Math.floor(next() * 50)}` }
      if (next() < 0.7) {
        list.insert(entry.key, entry.id)
        reference.set(`${entry.key}|${entry.id}`, entry)
      } else {
        expect(list.delete(entry.key, entry.id)).to.equal(reference.delete(`${entry.key}|${entry.id}`))
      }
    }
    const expected = [...reference.values()].sort(byKeyThenId)
    expect(list.size).to.equal(expected.length)
    expect([...list.range('', '\uffff', false)]).to.deep.equal(expected)
    expect([...list.range('', '\uffff', true)]).to.deep.equal([...expected].reverse())
  })

  it('walks an inclusive key range in both directions', () => {
    const list = SortedEntries.build(['a', 'b', 'b', 'c', 'd'].map((key, i) => ({ key, id: String(i) })))
    expect([...list.range('b', 'c', false)].map((e) => e.key + e.id)).to.deep.equal(['b1', 'b2', 'c3'])
    expect([...list.range('b', 'c', true)].map((e) => e.key + e.id)).to.deep.equal(['c3', 'b2', 'b1'])
    expect(list.idsWithKey('b')).to.deep.equal(['1', '2'])
    expect([...list.range('x', 'z', false)]).to.deep.equal([])
  })

  it('continues a range walk correctly when entries change between steps', () => {
    const list = new SortedEntries()
    for (let i = 0; i < 2000; i++) list.insert(String(i).padStart(5, '0'), 'id')
    const seen: string[] = []
    for (const entry of list.range('', '\uffff', false)) {
      seen.push(entry.key)
      const n = Number(entry.key)
      if (n % 10 === 0) list.delete(String(n + 1).padStart(5, '0'), 'id')
      if (n % 7 === 0) list.insert(`${String(n).padStart(5, '0')}x`, 'id')
    }
    const expected = [...list.range('', '\uffff', false)].map((e) => e.key)
    expect(seen.filter((k) => expected.includes(k))).to.deep.equal(expected)
    expect(new Set(seen).size).to.equal(seen.length)
  })

  it('collects the ids of one key in id order, across chunk boundaries', () => {
    const list = new SortedEntries()
    for (let i = 0; i < 1500; i++) list.insert(`k${i % 3}`, `i${String(i).padStart(4, '0')}`)
    const out: string[] = []
    list.collectKey('k1', out)
    expect(out).to.have.length(500)
    expect(out).to.deep.equal([...out].sort())
    expect(out).to.deep.equal([...list.range('k1', 'k1', false)].map((e) => e.id))
    expect(list.idsWithKey('k3')).to.deep.equal([])
  })
})
