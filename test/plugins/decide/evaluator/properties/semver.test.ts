import { expect } from 'chai'
import { matches } from './helpers.ts'
import { parseVersion } from '../../../../../plugins/decide/evaluator/properties/semver-version.ts'

describe('property operators: semver family (flags.md §8 semver rules)', () => {
  describe('reading versions', () => {
    it('strips a leading v, pads missing parts and drops leading zeros in the core', () => {
      expect(matches('semver_eq', '1.2.3', { key: 'v1.2.3' })).to.equal(true)
      expect(matches('semver_eq', '3.0.0', { key: '3' })).to.equal(true)
      expect(matches('semver_eq', '3.10.0', { key: '3.10' })).to.equal(true)
      expect(matches('semver_eq', '3.8.0', { key: '3.08' })).to.equal(true)
      expect(matches('semver_eq', '1.2.3', { key: ' 1.2.3 ' })).to.equal(true)
    })

    it('rejects four components, a v after spaces, and junk', () => {
      expect(parseVersion('1.2.3.4')).to.equal(null)
      expect(parseVersion(' v1.2.3')).to.equal(null)
      expect(parseVersion('V1.2.3')).to.equal(null)
      expect(parseVersion('1.2.x')).to.equal(null)
      expect(parseVersion('1.2.3-')).to.equal(null)
      expect(parseVersion('1.2.3-01')).to.equal(null)
      expect(matches('semver_gt', '1.0.0', { key: '1.2.3.4' })).to.equal(false)
      expect(matches('semver_neq', '1.0.0', { key: 'banana' })).to.equal(false)
    })

    it('treats an unreadable filter value as a non-match', () => {
      expect(matches('semver_neq', 'not-a-version', { key: '1.0.0' })).to.equal(false)
    })

    it('does not match absent keys', () => {
      for (const operator of [
        'semver_eq',
        'semver_neq',
        'semver_gt',
        'semver_tilde',
        'semver_caret',
        'semver_wildcard',
      ]) {
        expect(matches(operator, '1.0.0', {}), operator).to.equal(false)
      }
    })
  })

  describe('ordering', () => {
    it('orders numerically, not as text', () => {
      expect(matches('semver_gt', '1.5.0', { key: '1.19.0' })).to.equal(true)
      expect(matches('semver_lt', '1.19.0', { key: '1.5.0' })).to.equal(true)
      expect(matches('semver_gte', '1.2.3', { key: '1.2.3' })).to.equal(true)
      expect(matches('semver_lte', '1.2.3', { key: '1.2.4' })).to.equal(false)
    })

    it('sorts a pre-release below its release, by identifiers', () => {
      expect(matches('semver_lt', '1.0.0', { key: '1.0.0-alpha' })).to.equal(true)
      expect(matches('semver_lt', '1.0.0-alpha.beta', { key: '1.0.0-alpha.1' })).to.equal(true)
      expect(matches('semver_lt', '1.0.0-rc.1', { key: '1.0.0-beta.11' })).to.equal(true)
      expect(matches('semver_gt', '1.0.0-beta.2', { key: '1.0.0-beta.11' })).to.equal(true)
    })

    it("compares build metadata as the semver crate's total order does", () => {
      expect(matches('semver_eq', '1.0.0', { key: '1.0.0+build.1' })).to.equal(false)
      expect(matches('semver_gt', '1.0.0', { key: '1.0.0+build.1' })).to.equal(true)
      expect(matches('semver_eq', '1.0.0+build.1', { key: '1.0.0+build.1' })).to.equal(true)
    })
  })

  describe('ranges', () => {
    it('tilde allows patch updates only', () => {
      expect(matches('semver_tilde', '1.2.3', { key: '1.2.9' })).to.equal(true)
      expect(matches('semver_tilde', '1.2.3', { key: '1.2.2' })).to.equal(false)
      expect(matches('semver_tilde', '1.2.3', { key: '1.3.0' })).to.equal(false)
      expect(matches('semver_tilde', '1.2', { key: '1.2.0' })).to.equal(true)
    })

    it('caret allows updates that do not change the left-most non-zero part', () => {
      expect(matches('semver_caret', '1.2.3', { key: '1.9.0' })).to.equal(true)
      expect(matches('semver_caret', '1.2.3', { key: '2.0.0' })).to.equal(false)
      expect(matches('semver_caret', '0.2.3', { key: '0.2.9' })).to.equal(true)
      expect(matches('semver_caret', '0.2.3', { key: '0.3.0' })).to.equal(false)
      expect(matches('semver_caret', '0.0.3', { key: '0.0.3' })).to.equal(true)
      expect(matches('semver_caret', '0.0.3', { key: '0.0.4' })).to.equal(false)
    })

    it('wildcards cover the starred parts', () => {
      expect(matches('semver_wildcard', '1.*', { key: '1.9.9' })).to.equal(true)
      expect(matches('semver_wildcard', '1.*.*', { key: '2.0.0' })).to.equal(false)
      expect(matches('semver_wildcard', '1.2.*', { key: '1.2.7' })).to.equal(true)
      expect(matches('semver_wildcard', '1.2.*', { key: '1.3.0' })).to.equal(false)
      expect(matches('semver_wildcard', '3.08.*', { key: '3.8.1' })).to.equal(true)
      expect(matches('semver_wildcard', '*', { key: '7.0.0' })).to.equal(true)
    })

    it('rejects a wildcard followed by a number', () => {
      expect(matches('semver_wildcard', '1.*.3', { key: '1.0.3' })).to.equal(false)
    })

    it('lets a pre-release satisfy a range only through a comparator with a pre-release on the same version', () => {
      expect(matches('semver_caret', '1.2.3', { key: '1.5.0-beta' })).to.equal(false)
      expect(matches('semver_caret', '1.2.3-alpha', { key: '1.2.3-beta' })).to.equal(true)
      expect(matches('semver_caret', '1.2.3-alpha', { key: '1.2.4-beta' })).to.equal(false)
      expect(matches('semver_tilde', '1.2.3', { key: '1.2.3-rc.1' })).to.equal(false)
      expect(matches('semver_wildcard', '1.*', { key: '1.5.0-beta' })).to.equal(false)
    })
  })
})
