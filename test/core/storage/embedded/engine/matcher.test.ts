import { expect } from 'chai'
import { ObjectId } from 'bson'
import { compileFilter } from '../../../../../core/storage/embedded/engine/matcher.ts'

describe('compileFilter', () => {
  it('matches field equalities and $in lists of plain values as MongoDB does (arrays, embedded documents, numbers)', () => {
    const id = new ObjectId()
    const matcher = compileFilter({
      project_id: 1,
      distinct_id: { $in: ['a', 'b'] },
      tags: 'x',
      owner: id,
      at: { $eq: { k: 1 } },
    })
    expect(
      matcher.test({
        project_id: 1.0,
        distinct_id: 'b',
        tags: ['y', 'x'],
        owner: new ObjectId(id.toHexString()),
        at: { k: 1 },
      }),
    ).to.equal(true)
    expect(matcher.test({ project_id: 1, distinct_id: 'c', tags: 'x', owner: id, at: { k: 1 } })).to.equal(false)
    expect(matcher.test({ project_id: 1, distinct_id: 'a', tags: 'x', owner: id, at: { k: 1, j: 2 } })).to.equal(false)
  })

  it("answers scalar equalities directly and leaves arrays, missing fields and other types to mingo, with MongoDB's answers", () => {
    const matcher = compileFilter({ project_id: 1, id: 'p', version: 3 })
    expect(matcher.test({ project_id: 1, id: 'p', version: 3.0 })).to.equal(true)
    expect(matcher.test({ project_id: 1, id: 'p', version: 4 })).to.equal(false)
    expect(matcher.test({ project_id: 1, id: 'p', version: '3' })).to.equal(false)
    expect(matcher.test({ project_id: 1, id: 'p', version: [2, 3] })).to.equal(true)
    expect(matcher.test({ project_id: 1, id: 'p' })).to.equal(false)
    expect(compileFilter({ flag: false }).test({ flag: 0 })).to.equal(false)
  })

  it('still refuses an unknown operator when the filter is built, not when it is first used', () => {
    expect(() => compileFilter({ a: { $nope: 1 } })).to.throw()
  })
})
