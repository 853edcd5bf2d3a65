import { expect } from 'chai'
import { matches } from './helpers.ts'

describe('property operators: exact, is_not, is_set, is_not_set (flags.md §8)', () => {
  describe('exact', () => {
    it('is the default when the operator is missing or null', () => {
      expect(matches(undefined, 'value', { key: 'value' })).to.equal(true)
      expect(matches(null, 'value', { key: 'value' })).to.equal(true)
      expect(matches(null, 'value', { key: 'value2' })).to.equal(false)
    })

    it('compares text case-insensitively with Unicode lowercasing, not casefold', () => {
      expect(matches('exact', 'VALUE', { key: 'value' })).to.equal(true)
      expect(matches('exact', 'ÉTÉ', { key: 'été' })).to.equal(true)
      expect(matches('exact', 'Straße', { key: 'strasse' })).to.equal(false)
    })

    it('matches any element of a list, case-insensitively; an empty list matches nothing textual', () => {
      const countries = ['US', 'CA', 'Uk']
      for (const value of ['us', 'Us', 'US', 'ca', 'uk', 'UK'])
        expect(matches('exact', countries, { key: value })).to.equal(true)
      expect(matches('exact', countries, { key: 'de' })).to.equal(false)
      expect(matches('exact', [], { key: 'us' })).to.equal(false)
    })

    it('compares numbers by their text', () => {
      expect(matches('exact', 1, { key: '1' })).to.equal(true)
      expect(matches('exact', '1', { key: 1 })).to.equal(true)
      expect(matches('exact', ['1', '2'], { key: 2 })).to.equal(true)
      expect(matches('exact', 1.5, { key: '1.50' })).to.equal(false)
    })

    it('compares truthiness for boolean-ish filter values', () => {
      expect(matches('exact', true, { key: 'True' })).to.equal(true)
      expect(matches('exact', 'true', { key: true })).to.equal(true)
      expect(matches('exact', false, { key: 'FALSE' })).to.equal(true)
      expect(matches('exact', ['true'], { key: true })).to.equal(true)
      expect(matches('exact', ['false'], { key: 'false' })).to.equal(true)
      expect(matches('exact', true, { key: false })).to.equal(false)
      // "yes" is not truthy, so it equals false
      expect(matches('exact', false, { key: 'yes' })).to.equal(true)
    })

    it('reads null as the text "null"', () => {
      expect(matches('exact', 'null', { key: null })).to.equal(true)
      expect(matches('exact', 'value', { key: null })).to.equal(false)
    })

    it('does not match an absent key', () => {
      expect(matches('exact', 'value', {})).to.equal(false)
    })
  })

  describe('is_not', () => {
    it('negates exact, including lists', () => {
      expect(matches('is_not', 'value', { key: 'value2' })).to.equal(true)
      expect(matches('is_not', 'value', { key: '' })).to.equal(true)
      expect(matches('is_not', 'value', { key: null })).to.equal(true)
      expect(matches('is_not', ['value1', 'value2'], { key: 'value2' })).to.equal(false)
      expect(matches('is_not', ['value1', 'value2'], { key: 'value4' })).to.equal(true)
    })

    it('matches an absent key', () => {
      expect(matches('is_not', 'value', { other: 'value' })).to.equal(true)
    })

    it('does not match when the filter has no value', () => {
      expect(matches('is_not', null, { key: 'x' })).to.equal(false)
      expect(matches('is_not', undefined, {})).to.equal(false)
    })
  })

  describe('is_set / is_not_set', () => {
    it('is_set is true for any present value, null included', () => {
      expect(matches('is_set', 'is_set', { key: 'value' })).to.equal(true)
      expect(matches('is_set', null, { key: '' })).to.equal(true)
      expect(matches('is_set', 'is_set', { key: null })).to.equal(true)
      expect(matches('is_set', 'is_set', { other: 'x' })).to.equal(false)
    })

    it('is_not_set is true only for an absent key', () => {
      expect(matches('is_not_set', 'is_not_set', {})).to.equal(true)
      expect(matches('is_not_set', 'is_not_set', { key: null })).to.equal(false)
    })
  })

  describe('operators that cannot apply to a property', () => {
    it('never matches in, not_in, flag_evaluates_to or an unknown operator', () => {
      for (const operator of ['in', 'not_in', 'flag_evaluates_to', 'contains', 'nonsense']) {
        expect(matches(operator, 'x', { key: 'x' }), operator).to.equal(false)
        expect(matches(operator, 'x', {}), operator).to.equal(false)
      }
    })
  })
})
