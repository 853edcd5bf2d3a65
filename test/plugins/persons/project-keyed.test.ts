import { expect } from 'chai'
import { ProjectKeyed } from '../../../plugins/persons/project-keyed.ts'

describe('ProjectKeyed', () => {
  it('keeps values apart per project and id', () => {
    const memo = new ProjectKeyed<string>(10)
    memo.set(1, 'a', 'one-a')
    memo.set(2, 'a', 'two-a')
    expect(memo.get(1, 'a')).to.equal('one-a')
    expect(memo.get(2, 'a')).to.equal('two-a')
    expect(memo.get(1, 'b')).to.equal(undefined)
  })

  it('counts an id once however often it is set, and empties itself past the limit', () => {
    const memo = new ProjectKeyed<number>(3)
    memo.set(1, 'a', 1)
    memo.set(1, 'a', 2)
    memo.set(1, 'b', 3)
    memo.set(2, 'c', 4)
    expect([memo.get(1, 'a'), memo.get(1, 'b'), memo.get(2, 'c')]).to.deep.equal([2, 3, 4])
    memo.set(2, 'd', 5) // the fourth id: the memo starts again with it alone
    expect([memo.get(1, 'a'), memo.get(2, 'c'), memo.get(2, 'd')]).to.deep.equal([undefined, undefined, 5])
  })
})
