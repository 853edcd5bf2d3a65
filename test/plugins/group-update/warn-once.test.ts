import { expect } from 'chai'
import { WarnOnce } from '../../../plugins/group-update/warn-once.ts'

describe('WarnOnce', () => {
  it('says yes once per key per window', () => {
    const once = new WarnOnce(1000)
    expect(once.shouldWarn('a', 0)).to.equal(true)
    expect(once.shouldWarn('a', 999)).to.equal(false)
    expect(once.shouldWarn('b', 999)).to.equal(true)
    expect(once.shouldWarn('a', 1000)).to.equal(true)
    expect(once.shouldWarn('a', 1500)).to.equal(false)
  })

  it('forgets the oldest keys when full, so memory stays bounded', () => {
    const once = new WarnOnce(1000, 2)
    for (const key of ['a', 'b', 'c']) once.shouldWarn(key, 0)
    expect(once.shouldWarn('a', 1)).to.equal(true)
    expect(once.shouldWarn('c', 1)).to.equal(false)
  })
})
