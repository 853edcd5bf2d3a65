import { expect } from 'chai'
import { copyProperties, hasOwn, layered, ownValue } from '../../../plugins/persons/properties.ts'

const hostile = () =>
  JSON.parse(
    '{"__proto__": {"polluted": true}, "constructor": "c", "a.b": 1, "$browser": "Firefox", "toString": 5}',
  ) as Record<string, unknown>

describe('persons: property objects', () => {
  it('copies __proto__, constructor, dotted and $ keys as data without touching any prototype', () => {
    const copy = copyProperties(hostile())
    expect(Object.keys(copy)).to.deep.equal(['__proto__', 'constructor', 'a.b', '$browser', 'toString'])
    expect(Object.getPrototypeOf(copy)).to.equal(null)
    expect(copy.__proto__).to.deep.equal({ polluted: true })
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
  })

  it('layers one object over another, the upper one winning, with hostile keys on either side', () => {
    const result = layered(hostile(), JSON.parse('{"__proto__": "over", "x": 2}'))
    expect(result.__proto__).to.equal('over')
    expect(result.x).to.equal(2)
    expect(result.constructor).to.equal('c')
    expect(Object.getPrototypeOf(result)).to.equal(null)
  })

  it('reads only own keys: inherited members are absent', () => {
    const plain: Record<string, unknown> = { a: 1 }
    expect(hasOwn(plain, 'constructor')).to.equal(false)
    expect(ownValue(plain, 'toString')).to.equal(undefined)
    expect(ownValue(plain, 'a')).to.equal(1)
  })

  it('treats arrays and non-objects as empty', () => {
    expect(Object.keys(copyProperties(['a']))).to.deep.equal([])
    expect(Object.keys(copyProperties('str'))).to.deep.equal([])
    expect(Object.keys(copyProperties(null))).to.deep.equal([])
  })
})
