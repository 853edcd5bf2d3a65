import { expect } from 'chai'
import {
  activeFlags,
  attributionProperties,
  featureValues,
  withActiveFlags,
} from '../../../plugins/flag-attribution/attribution.ts'

describe('flag attribution properties', () => {
  it('reads $feature/<key> properties as flag values, ignoring a bare prefix', () => {
    const values = featureValues({ '$feature/beta': true, '$feature/exp': 'test', '$feature/': true, other: 1 })
    expect([...values]).to.deep.equal([
      ['beta', true],
      ['exp', 'test'],
    ])
  })

  it('derives $active_feature_flags sorted, without false flags, when the event has none', () => {
    const properties = { '$feature/zeta': true, '$feature/alpha': 'control', '$feature/off': false }
    expect(withActiveFlags(properties)).to.deep.equal({ ...properties, $active_feature_flags: ['alpha', 'zeta'] })
  })

  it('keeps an $active_feature_flags the SDK sent, as sent', () => {
    expect(withActiveFlags({ '$feature/a': true, $active_feature_flags: ['b'] })).to.equal(undefined)
  })

  it('changes nothing when there are no flags, or none is active', () => {
    expect(withActiveFlags({ a: 1 })).to.equal(undefined)
    expect(withActiveFlags({ '$feature/a': false })).to.equal(undefined)
  })

  it('builds $feature/* and the active list from evaluated values', () => {
    expect(attributionProperties({ b: false, a: 'variant', c: true })).to.deep.equal({
      '$feature/b': false,
      '$feature/a': 'variant',
      '$feature/c': true,
      $active_feature_flags: ['a', 'c'],
    })
    expect(activeFlags(new Map([['x', false]]))).to.deep.equal([])
  })
})
