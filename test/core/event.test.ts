import { expect } from 'chai'
import { copyRecord, fromWire, withFields } from '../../core/event.ts'

describe('event', () => {
  it('makes the first form of a wire event, with top-level $set merged over properties.$set', () => {
    const event = fromWire({ event: 'e', distinct_id: 7, properties: { a: 1, $set: { x: 1, y: 1 } }, $set: { y: 2 }, timestamp: '2026-01-01T00:00:01.000Z' }, { receivedAt: new Date('2026-01-01T00:00:02.000Z') })
    expect(event).to.deep.equal({ uuid: '', event: 'e', distinctId: '7', properties: { a: 1, $set: { x: 1, y: 2 } }, timestamp: new Date('2026-01-01T00:00:01.000Z') })
  })

  it('stores a uuid in lower case, whatever case the client sent it in', () => {
    const event = fromWire({ event: 'e', distinct_id: 'd', uuid: '0190A000-0000-7000-8000-0000000000AB' }, { receivedAt: new Date() })
    expect(event.uuid).to.equal('0190a000-0000-7000-8000-0000000000ab')
  })

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
