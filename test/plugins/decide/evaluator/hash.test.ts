import { createHash } from 'node:crypto'
import { expect } from 'chai'
import {
  hashFor,
  hashPrefix,
  hashWithPrefix,
  holdoutHash,
  normalizeDistinctId,
} from '../../../../plugins/decide/evaluator/hash.ts'
import { isInRollout, selectVariant } from '../../../../plugins/decide/evaluator/rollout.ts'
import { MULTIVARIATE_FLAG_55_PERCENT, MULTIVARIATE_VARIANTS, SIMPLE_FLAG_45_PERCENT } from './fixtures/consistency.ts'

/** flags.md §2 from node:crypto: the first 15 hex digits of SHA-1 of the text's UTF-8, over 2^60 − 1. */
function referenceHash(text: string): number {
  return Number(createHash('sha1').update(text, 'utf8').digest().readBigUInt64BE(0) >> 4n) / Number(0xfffffffffffffffn)
}

describe('evaluator hash (flags.md §2)', () => {
  describe('worked examples', () => {
    const examples: [string, string, string, number][] = [
      ['simple-flag', 'distinct_id_0', '', 0.7836963764],
      ['simple-flag', 'distinct_id_1', '', 0.3397069927],
      ['multivariate-flag', 'distinct_id_0', '', 0.5020377961],
      ['multivariate-flag', 'distinct_id_0', 'variant', 0.6186454538],
      ['multivariate-flag', 'distinct_id_2', 'variant', 0.0639010628],
      ['multivariate-flag', 'distinct_id_3', '', 0.7010125555],
    ]
    for (const [key, id, salt, expected] of examples) {
      it(`hashes "${key}.${id}${salt}" to ${expected}`, () => {
        expect(hashFor(key, id, salt)).to.be.closeTo(expected, 1e-10)
      })
    }

    it('divides the first 15 hex digits by 2^60 − 1 exactly', () => {
      // c8a05362b9f414f = 903540405459435855
      expect(hashFor('simple-flag', 'distinct_id_0')).to.equal(903540405459435855 / 1152921504606846975)
    })

    it('rounds the 60-bit prefix to a double exactly as BigInt arithmetic does, for 20,000 inputs', () => {
      const differing: string[] = []
      for (let i = 0; i < 20_000; i++) {
        const id = i % 7 === 0 ? `ünï-${i}-\ud800` : i % 11 === 0 ? `\udc00${i}` : `user-${i}`
        const salt = i % 2 ? 'variant' : ''
        if (hashFor(`flag-${i % 50}`, id, salt) !== referenceHash(`flag-${i % 50}.${id}${salt}`)) differing.push(id)
      }
      expect(differing).to.deep.equal([])
    })

    it('hashes with a prepared prefix as with the flag key, whichever identifiers came before', () => {
      // the identifier's bytes are kept from one call to the next: same text, other text, long text
      const prefix = hashPrefix('prepared-flag')
      const ids = ['u1', 'u1', 'u2', 'x'.repeat(3000), 'u2', 'é'.repeat(1500), 'u1', '😀\ud800', 'u1']
      for (const id of ids)
        for (const salt of ['', 'variant']) {
          expect(hashWithPrefix(prefix, id, salt)).to.equal(referenceHash(`prepared-flag.${id}${salt}`))
          expect(hashFor('prepared-flag', id, salt)).to.equal(referenceHash(`prepared-flag.${id}${salt}`))
        }
    })

    it('hashes texts past one SHA-1 block (uuids with the variant salt, 200-character ids) as node:crypto does', () => {
      const reference = (text: string) =>
        Number(BigInt(`0x${createHash('sha1').update(text, 'utf8').digest('hex').slice(0, 15)}`)) /
        Number(0xfffffffffffffffn)
      const ids = ['0190a1b2-c3d4-7e5f-8a9b-0123456789ab', 'x'.repeat(200), '😀'.repeat(200), `ü${'y'.repeat(199)}`]
      for (const id of ids) {
        expect(hashFor('a-rather-long-feature-flag-key', id, 'variant')).to.equal(
          reference(`a-rather-long-feature-flag-key.${id}variant`),
        )
      }
    })
  })

  describe('consistency tables published by the PostHog SDKs', () => {
    it('gives the 45% flag the published answer for all 1,000 ids', () => {
      const mismatches: number[] = []
      for (let i = 0; i < 1000; i++) {
        const enabled = isInRollout(hashFor('simple-flag', `distinct_id_${i}`), 45)
        if (enabled !== (SIMPLE_FLAG_45_PERCENT[i] === '1')) mismatches.push(i)
      }
      expect(SIMPLE_FLAG_45_PERCENT).to.have.length(1000)
      expect(mismatches).to.deep.equal([])
    })

    it('gives the 55% multivariate flag the published variant for all 1,000 ids', () => {
      const mismatches: number[] = []
      for (let i = 0; i < 1000; i++) {
        const id = `distinct_id_${i}`
        const inRollout = isInRollout(hashFor('multivariate-flag', id), 55)
        const variant = inRollout
          ? selectVariant(MULTIVARIATE_VARIANTS, hashFor('multivariate-flag', id, 'variant'))
          : null
        const expected =
          MULTIVARIATE_FLAG_55_PERCENT[i] === '0'
            ? null
            : MULTIVARIATE_VARIANTS[Number(MULTIVARIATE_FLAG_55_PERCENT[i]) - 1].key
        if (variant !== expected) mismatches.push(i)
      }
      expect(MULTIVARIATE_FLAG_55_PERCENT).to.have.length(1000)
      expect(mismatches).to.deep.equal([])
    })
  })

  describe('special identifiers', () => {
    it('hashes an empty identifier to 0.0 for rollout and variant (§4.5)', () => {
      expect(hashFor('any-flag', '')).to.equal(0)
      expect(hashFor('any-flag', '', 'variant')).to.equal(0)
    })

    it('hashes holdouts as "holdout-" + identifier, without the flag key (§6.2)', () => {
      expect(holdoutHash('user-1')).to.equal(referenceHash('holdout-user-1'))
      expect(holdoutHash('user-1')).to.not.equal(hashFor('holdout', 'user-1'))
    })

    it('hashes UTF-8 bytes', () => {
      expect(hashFor('flag', 'ünïcödé')).to.equal(referenceHash('flag.ünïcödé'))
      expect(hashFor('flag', 'ünïcödé')).to.not.equal(hashFor('flag', 'unicode'))
    })
  })

  describe('distinct id normalisation (§4.1)', () => {
    it('writes numeric ids as JSON text', () => {
      expect(normalizeDistinctId(8675309)).to.equal('8675309')
      expect(normalizeDistinctId(123.45)).to.equal('123.45')
    })

    it('cuts ids longer than 200 characters to 200 code points', () => {
      expect(normalizeDistinctId('x'.repeat(250))).to.equal('x'.repeat(200))
      expect(normalizeDistinctId('😀'.repeat(201))).to.equal('😀'.repeat(200))
      expect(normalizeDistinctId('short')).to.equal('short')
      expect(normalizeDistinctId('😀'.repeat(150))).to.equal('😀'.repeat(150))
      expect(normalizeDistinctId('a\uD800b'.repeat(100))).to.equal(
        Array.from('a\uD800b'.repeat(100)).slice(0, 200).join(''),
      )
    })

    it('cuts a multi-megabyte id to its first 200 code points', () => {
      expect(normalizeDistinctId('é'.repeat(8 * 1024 * 1024))).to.equal('é'.repeat(200))
    })
  })
})
