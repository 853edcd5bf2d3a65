import { expect } from 'chai'
import { matches } from './helpers.ts'
import { formatNumber, parseRustF64, toText } from '../../../../../plugins/decide/evaluator/properties/values.ts'

describe('property operators: gt, gte, lt, lte, between, not_between (flags.md §8)', () => {
  it('compares numbers and numeric text numerically', () => {
    expect(matches('gt', 1, { key: 2 })).to.equal(true)
    expect(matches('gt', '1', { key: '2' })).to.equal(true)
    expect(matches('gt', '30', { key: '100' })).to.equal(true)
    expect(matches('lt', '30', { key: '100' })).to.equal(false)
    expect(matches('gte', 2, { key: '2' })).to.equal(true)
    expect(matches('lte', '1e3', { key: 1000 })).to.equal(true)
    expect(matches('lt', 0, { key: -0.5 })).to.equal(true)
  })

  it('never falls back to comparing text', () => {
    expect(matches('gt', 'a', { key: 'b' })).to.equal(false)
    expect(matches('lt', 'b', { key: 'a' })).to.equal(false)
    expect(matches('gt', 1, { key: '123abc' })).to.equal(false)
    expect(matches('gt', 1, { key: ' 5' })).to.equal(false)
    expect(matches('gt', 1, { key: true })).to.equal(false)
    expect(matches('gt', 1, { key: null })).to.equal(false)
  })

  it('does not match an absent key', () => {
    for (const operator of ['gt', 'gte', 'lt', 'lte']) expect(matches(operator, 1, {}), operator).to.equal(false)
  })

  it('between is inclusive on both ends and not_between is its complement', () => {
    expect(matches('between', [1, 10], { key: 1 })).to.equal(true)
    expect(matches('between', [1, 10], { key: '10' })).to.equal(true)
    expect(matches('between', [1, 10], { key: 11 })).to.equal(false)
    expect(matches('not_between', [1, 10], { key: 11 })).to.equal(true)
    expect(matches('not_between', [1, 10], { key: 5 })).to.equal(false)
    expect(matches('between', ['1.5', '2.5'], { key: 2 })).to.equal(true)
  })

  it('an absent key is outside the range', () => {
    expect(matches('between', [1, 10], {})).to.equal(false)
    expect(matches('not_between', [1, 10], {})).to.equal(true)
  })

  it('malformed ranges and NaN values match neither operator', () => {
    for (const operator of ['between', 'not_between']) {
      expect(matches(operator, [10, 1], { key: 5 }), `${operator} min>max`).to.equal(false)
      expect(matches(operator, [1], { key: 5 }), `${operator} one bound`).to.equal(false)
      expect(matches(operator, 5, { key: 5 }), `${operator} scalar`).to.equal(false)
      expect(matches(operator, ['a', 10], { key: 5 }), `${operator} text bound`).to.equal(false)
      expect(matches(operator, [1, 10], { key: 'NaN' }), `${operator} NaN`).to.equal(false)
      expect(matches(operator, [1, 10], { key: 'abc' }), `${operator} text value`).to.equal(false)
    }
  })

  describe('text and number forms', () => {
    it('parses floats as Rust does', () => {
      expect(parseRustF64('23')).to.equal(23)
      expect(parseRustF64('1e3')).to.equal(1000)
      expect(parseRustF64('.5')).to.equal(0.5)
      expect(parseRustF64('5.')).to.equal(5)
      expect(parseRustF64('-inf')).to.equal(-Infinity)
      expect(Number.isNaN(parseRustF64('NaN'))).to.equal(true)
      expect(parseRustF64('0x10')).to.equal(null)
      expect(parseRustF64(' 1')).to.equal(null)
      expect(parseRustF64('1_000')).to.equal(null)
      expect(parseRustF64('')).to.equal(null)
    })

    it('writes values as serde_json does', () => {
      expect(toText('text')).to.equal('text')
      expect(toText(true)).to.equal('true')
      expect(toText(null)).to.equal('null')
      expect(toText(['a', 'b'])).to.equal('["a","b"]')
      expect(toText({ a: 1 })).to.equal('{"a":1}')
      expect(formatNumber(123)).to.equal('123')
      expect(formatNumber(1.5)).to.equal('1.5')
      expect(formatNumber(1e21)).to.equal('1e21')
      expect(formatNumber(1e-7)).to.equal('1e-7')
      expect(formatNumber(0.001)).to.equal('0.001')
      expect(formatNumber(12345678901234567890)).to.equal('12345678901234567168')
    })
  })
})
