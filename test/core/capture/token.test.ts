import { expect } from 'chai'
import { batchTokenOf, eventTokenOf, resolveToken, tokenProblem } from '../../../core/capture/token.ts'
import { thrownBy } from './http-error-helpers.ts'

describe('capture token', () => {
  describe('tokenProblem', () => {
    it('accepts a public project key of up to 64 bytes', () => {
      expect(tokenProblem('phc_testprojectkey123')).to.equal(undefined)
      expect(tokenProblem('p'.repeat(64))).to.equal(undefined)
    })

    it('names each reason a key is refused', () => {
      expect(tokenProblem('')).to.equal('empty')
      expect(tokenProblem('p'.repeat(65))).to.equal('too_long')
      expect(tokenProblem('phc_ключ')).to.equal('not_ascii')
      expect(tokenProblem('phx_personal_key_abc')).to.equal('personal_api_key')
      expect(tokenProblem('phc_a\0b')).to.equal('null_byte')
    })

    it('counts the length in UTF-8 bytes', () => {
      expect(tokenProblem('é'.repeat(33))).to.equal('too_long')
    })
  })

  describe('where the key is read', () => {
    it('reads a batch key from api_key, token or $token', () => {
      expect(batchTokenOf({ api_key: 'a', batch: [] })).to.equal('a')
      expect(batchTokenOf({ token: 'b', batch: [] })).to.equal('b')
      expect(batchTokenOf({ $token: 'c', batch: [] })).to.equal('c')
      expect(batchTokenOf({ api_key: 42, batch: [] })).to.equal(undefined)
    })

    it('reads an event key from token, $token, api_key, then properties.token', () => {
      expect(eventTokenOf({ token: 'a', properties: { token: 'z' } })).to.equal('a')
      expect(eventTokenOf({ $token: 'b' })).to.equal('b')
      expect(eventTokenOf({ api_key: 'c' })).to.equal('c')
      expect(eventTokenOf({ properties: { token: 'd' } })).to.equal('d')
    })

    it('does not read properties.$token or a non-string properties.token', () => {
      expect(eventTokenOf({ properties: { $token: 'a' } })).to.equal(undefined)
      expect(eventTokenOf({ properties: { token: 7 } })).to.equal(undefined)
    })
  })

  describe('resolveToken', () => {
    it('lets the batch key win over keys in the events', () => {
      expect(resolveToken(' phc_batch ', [{ token: 'phc_a' }, { token: 'phc_b' }])).to.equal('phc_batch')
    })

    it('takes the one key the events agree on, once trimmed, ignoring events without one', () => {
      const events = [{ properties: { token: 'phc_a' } }, { event: 'no key' }, { token: ' phc_a\n' }]
      expect(resolveToken(undefined, events)).to.equal('phc_a')
    })

    it('answers 401 missing_api_key when no key is anywhere', () => {
      const error = thrownBy(() => resolveToken(undefined, [{ event: 'x' }]))
      expect([error.status, error.code, error.detail]).to.deep.equal([
        401,
        'missing_api_key',
        'event submitted without an api_key',
      ])
    })

    it('answers 401 inconsistent_api_keys when events name different keys', () => {
      const error = thrownBy(() => resolveToken(undefined, [{ token: 'phc_a' }, { properties: { token: 'phc_b' } }]))
      expect([error.status, error.code]).to.deep.equal([401, 'inconsistent_api_keys'])
    })

    it('answers 401 invalid_api_key with the reason for a refused key', () => {
      const error = thrownBy(() => resolveToken('phx_personal', []))
      expect([error.status, error.type, error.code, error.detail, error.attr]).to.deep.equal([
        401,
        'authentication_error',
        'invalid_api_key',
        'API key is not valid: personal_api_key',
        'api_key',
      ])
      expect(thrownBy(() => resolveToken('   ', [])).detail).to.equal('API key is not valid: empty')
    })
  })
})
