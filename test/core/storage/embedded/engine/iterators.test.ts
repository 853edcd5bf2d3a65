import { expect } from 'chai'
import v8 from 'node:v8'
import vm from 'node:vm'
import { encode } from '../../../../../core/storage/embedded/bson/codec.ts'
import { Catalog } from '../../../../../core/storage/embedded/engine/catalog.ts'
import { runFind } from '../../../../../core/storage/embedded/engine/find-exec.ts'
import { parseIndexSpec } from '../../../../../core/storage/embedded/engine/index-spec.ts'
import { distinct, filterMapped, mapped, skipLimit } from '../../../../../core/storage/embedded/engine/iterators.ts'
import { SILENT } from '../../../../../core/storage/embedded/persistence/journal.ts'

/** An iterable of `items` that records whether it was told to stop early (a range walk closing its cursor). */
function source(items: number[]): Iterable<number> & { returned: boolean; pulled: number } {
  const out = {
    returned: false,
    pulled: 0,
    [Symbol.iterator]: () => {
      let i = 0
      return {
        next: (): IteratorResult<number> => {
          out.pulled += 1
          return i < items.length ? { done: false, value: items[i++] } : { done: true, value: undefined }
        },
        return: (): IteratorResult<number> => {
          out.returned = true
          return { done: true, value: undefined }
        },
      }
    },
  }
  return out
}

describe('query result iterators', () => {
  it('map, filter, skip, limit and drop repeats lazily, in order', () => {
    expect([...mapped([1, 2, 3], (n) => n * 10)]).to.deep.equal([10, 20, 30])
    expect([...filterMapped([1, 2, 3, 4], (n) => (n % 2 ? undefined : `${n}`))]).to.deep.equal(['2', '4'])
    expect([...skipLimit([1, 2, 3, 4, 5], 1, 3)]).to.deep.equal([2, 3, 4])
    expect([...skipLimit([1, 2, 3], 0, 0)]).to.deep.equal([1, 2, 3])
    expect([...skipLimit([1, 2, 3], 5, 0)]).to.deep.equal([])
    expect([...distinct([3, 1, 3, 2, 1])]).to.deep.equal([3, 1, 2])
  })

  it('stop their source at a limit without reading past it, and when a loop breaks', () => {
    const limited = source([1, 2, 3, 4])
    expect([
      ...skipLimit(
        mapped(limited, (n) => n),
        0,
        2,
      ),
    ]).to.deep.equal([1, 2])
    expect(limited.pulled).to.equal(2)
    expect(limited.returned).to.equal(true)
    const broken = source([1, 2, 3])
    for (const n of distinct(filterMapped(broken, (x) => x))) if (n === 1) break
    expect(broken.returned).to.equal(true)
    const whole = source([1, 2])
    expect([...mapped(whole, (n) => n)]).to.deep.equal([1, 2])
    expect(whole.returned).to.equal(false)
  })

  it("leave nothing of a finished point lookup to survive the next minor GC (generators did, on Node 20's V8)", () => {
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void
    const catalog = new Catalog(SILENT)
    const coll = catalog.create('app', 'events', {})
    catalog.createIndex(coll, parseIndexSpec({ key: { project_id: 1, uuid: 1 }, name: 'pu', unique: true }))
    for (let i = 0; i < 1000; i++) {
      const doc = { _id: i, project_id: 1, uuid: `u${i}`, properties: { n: i, text: 'x'.repeat(100) } }
      coll.insert(encode(doc), doc)
    }
    const lookup = (i: number) => {
      const filter = { project_id: 1, uuid: `u${i % 1000}` }
      const results = runFind(coll, { filter, sort: [], skip: 0, limit: 1 })
      let n = 0
      for (let item = results.next(); !item.done; item = results.next()) n += 1
      return n
    }
    const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_used_size
    for (let i = 0; i < 2000; i++) expect(lookup(i)).to.equal(1)
    let allocated = 0
    let survived = 0
    for (let round = 0; round < 10; round++) {
      gc({ type: 'minor' })
      gc({ type: 'minor' })
      const start = newSpace()
      for (let i = 0; i < 200; i++) lookup(i * 7)
      const end = newSpace()
      gc({ type: 'minor' })
      allocated += end - start
      survived += newSpace()
    }
    expect(allocated).to.be.above(100_000)
    // what stays reachable is a few objects of the test itself; 15% and more survived with generators
    expect(survived / allocated).to.be.below(0.03)
  })
})
