import { expect } from 'chai'
import { copyRecord, withFields } from '../../core/plugin-api.ts'

describe('plugin-api: the cheap copies of events and records', () => {
  it('withFields is a spread: the same keys and values, the source untouched', () => {
    const source = { a: 1, b: 2 }
    const made = withFields<Record<string, number>>(source, { b: 3, c: 4 })
    expect(made).to.deep.equal({ a: 1, b: 3, c: 4 })
    expect(source).to.deep.equal({ a: 1, b: 2 })
  })

  it('copyRecord keeps the key order and keeps a __proto__ key as an own property, as a spread does', () => {
    const source = JSON.parse('{"b":1,"__proto__":{"polluted":true},"a":2}') as Record<string, unknown>
    const copy = copyRecord(source)
    expect(Object.keys(copy)).to.deep.equal(['b', '__proto__', 'a'])
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype)
    expect((copy as { polluted?: unknown }).polluted).to.equal(undefined)
    expect(copy).to.deep.equal({ ...source })
  })
})
