import { expect } from 'chai'
import { deserialize, Long, serialize } from 'bson'
import { makeProjector, projectRaw } from '../../../../../core/storage/embedded/engine/find-exec.ts'

const stored = serialize({
  _id: 7,
  project_id: 1,
  distinct_id: 'a',
  n: Long.fromNumber(5),
  nested: { x: 1 },
  last: true,
})
const project = (projection: Record<string, unknown>) =>
  deserialize(projectRaw(makeProjector(projection)!, stored), { promoteLongs: false })

describe('find projections', () => {
  it('applies top-level exclusions and inclusions to the stored bytes, in the document order', () => {
    const excluded = makeProjector({ _id: 0 })!
    expect(excluded.raw).to.be.a('function')
    expect(Object.keys(project({ _id: 0 }))).to.deep.equal(['project_id', 'distinct_id', 'n', 'nested', 'last'])
    expect(project({ _id: 0, distinct_id: 1 })).to.deep.equal({ distinct_id: 'a' })
    expect(Object.keys(project({ last: 1, project_id: 1 }))).to.deep.equal(['_id', 'project_id', 'last'])
    expect(Object.keys(project({ nested: 0, n: false }))).to.deep.equal(['_id', 'project_id', 'distinct_id', 'last'])
  })

  it('keeps the exact BSON type of each kept value (an int64 stays an int64)', () => {
    expect(project({ _id: 0 }).n).to.be.instanceOf(Long)
  })

  it('leaves paths, operators and literals to the general projection, with the same answers', () => {
    for (const projection of [{ 'nested.x': 1 }, { nested: { $literal: 1 } }, { _id: 0, n: 1, 'nested.x': 1 }])
      expect(makeProjector(projection)!.raw).to.equal(undefined)
    expect(project({ 'nested.x': 1, _id: 0 })).to.deep.equal({ nested: { x: 1 } })
  })

  it('still projects a decoded document with a top-level projection (its general form is built on first use)', () => {
    expect(makeProjector({ _id: 0, distinct_id: 1 })!({ _id: 7, project_id: 1, distinct_id: 'a' })).to.deep.equal({
      distinct_id: 'a',
    })
    expect(() => makeProjector({ a: { $slice: 'x' } })).to.throw()
  })
})
