import { expect } from 'chai'
import { TextMemo } from '../../../../../plugins/decide/evaluator/properties/memo.ts'

describe('TextMemo', () => {
  it('answers what it remembered, and forgets the oldest entry once full', () => {
    const memo = new TextMemo<number>(2)
    memo.remember('a', 1)
    memo.remember('b', 2)
    expect([memo.get('a'), memo.get('b')]).to.deep.equal([1, 2])
    memo.remember('c', 3)
    expect([memo.get('a'), memo.get('b'), memo.get('c')]).to.deep.equal([undefined, 2, 3])
  })
})
