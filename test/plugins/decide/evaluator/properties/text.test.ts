import { expect } from 'chai'
import { matches } from './helpers.ts'

describe('property operators: icontains, starts_with, ends_with, icontains_multi (flags.md §8)', () => {
  it('icontains lowercases ASCII on both sides and reads numbers as text', () => {
    expect(matches('icontains', 'valUe', { key: 'vaLue4' })).to.equal(true)
    expect(matches('icontains', 'valUe', { key: '343tfvalue5' })).to.equal(true)
    expect(matches('icontains', 'valUe', { key: 'Alakazam' })).to.equal(false)
    expect(matches('icontains', 'valUe', { key: 123 })).to.equal(false)
    expect(matches('icontains', '3', { key: 323 })).to.equal(true)
    expect(matches('icontains', '3', { key: 'three' })).to.equal(false)
  })

  it('icontains folds only ASCII letters', () => {
    expect(matches('icontains', 'É', { key: 'café' })).to.equal(false)
    expect(matches('icontains', 'CAF', { key: 'café' })).to.equal(true)
  })

  it('reads a null property as "null", so "nu" is contained', () => {
    expect(matches('icontains', 'nu', { key: null })).to.equal(true)
    expect(matches('not_icontains', 'nu', { key: null })).to.equal(false)
  })

  it('not_icontains negates and matches an absent key', () => {
    expect(matches('not_icontains', 'abc', { key: 'xyz' })).to.equal(true)
    expect(matches('not_icontains', 'abc', { key: 'xABCx' })).to.equal(false)
    expect(matches('not_icontains', 'abc', {})).to.equal(true)
    expect(matches('icontains', 'abc', {})).to.equal(false)
  })

  it('starts_with and ends_with test prefix and suffix without case', () => {
    expect(matches('starts_with', 'Val', { key: 'value' })).to.equal(true)
    expect(matches('starts_with', 'Val', { key: 'a value' })).to.equal(false)
    expect(matches('ends_with', 'LUE', { key: 'value' })).to.equal(true)
    expect(matches('ends_with', 'LUE', { key: 'values' })).to.equal(false)
    expect(matches('not_starts_with', 'Val', { key: 'a value' })).to.equal(true)
    expect(matches('not_ends_with', 'LUE', { key: 'value' })).to.equal(false)
    expect(matches('not_starts_with', 'Val', {})).to.equal(true)
    expect(matches('not_ends_with', 'LUE', {})).to.equal(true)
    expect(matches('starts_with', 'Val', {})).to.equal(false)
    expect(matches('ends_with', 'LUE', {})).to.equal(false)
  })

  it('icontains_multi matches when any element, or the single value, is contained', () => {
    expect(matches('icontains_multi', ['foo', 'BAR'], { key: 'xbarx' })).to.equal(true)
    expect(matches('icontains_multi', ['foo', 'bar'], { key: 'baz' })).to.equal(false)
    expect(matches('icontains_multi', 'FOO', { key: 'a foo' })).to.equal(true)
    expect(matches('icontains_multi', [], { key: 'anything' })).to.equal(false)
    expect(matches('not_icontains_multi', ['foo', 'bar'], { key: 'baz' })).to.equal(true)
    expect(matches('not_icontains_multi', ['foo', 'bar'], { key: 'foobar' })).to.equal(false)
    expect(matches('not_icontains_multi', ['foo'], {})).to.equal(true)
    expect(matches('icontains_multi', ['foo'], {})).to.equal(false)
  })
})
