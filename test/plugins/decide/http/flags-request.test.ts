import { expect } from 'chai'
import { HttpError } from '../../../../core/errors.ts'
import { parseFlagsJson, readFlagsBody, tokenOf } from '../../../../plugins/decide/http/flags-request.ts'

function httpError(fn: () => unknown): HttpError {
  try {
    fn()
  } catch (error) {
    if (error instanceof HttpError) return error
    throw error
  }
  throw new Error('expected an HttpError')
}

describe('decide flags request', () => {
  describe('parseFlagsJson', () => {
    it('reads plain JSON', () => {
      expect(parseFlagsJson('{"distinct_id":"a","n":1.5}')).to.deep.equal({ distinct_id: 'a', n: 1.5 })
    })

    it('reads JSON5 and turns NaN and Infinity into null, nested too', () => {
      const body = parseFlagsJson(
        "{distinct_id: 'a', person_properties: {x: NaN, y: [Infinity, -Infinity, 2]}, // comment\n}",
      )
      expect(body).to.deep.equal({ distinct_id: 'a', person_properties: { x: null, y: [null, null, 2] } })
    })

    it('keeps a __proto__ key as data, not as the prototype', () => {
      const body = parseFlagsJson("{distinct_id: 'a', __proto__: {polluted: true}}")
      expect(Object.getPrototypeOf(body)).to.equal(Object.prototype)
      expect((body as { polluted?: unknown }).polluted).to.equal(undefined)
    })

    it('answers 400 for text that is neither JSON nor JSON5, and for a non-object body', () => {
      expect(httpError(() => parseFlagsJson('{distinct_id: ')).status).to.equal(400)
      expect(httpError(() => parseFlagsJson('[1, 2]')).code).to.equal('invalid_json')
      expect(httpError(() => parseFlagsJson('"text"')).status).to.equal(400)
    })
  })

  describe('tokenOf', () => {
    it('takes token, then api_key, then $token from the body', () => {
      expect(tokenOf({ token: 'phc_a', api_key: 'phc_b' }, {})).to.equal('phc_a')
      expect(tokenOf({ api_key: 'phc_b', $token: 'phc_c' }, {})).to.equal('phc_b')
      expect(tokenOf({ $token: 'phc_c' }, {})).to.equal('phc_c')
    })

    it('falls back to the query string and ignores empty or non-string values', () => {
      expect(tokenOf({ token: '', api_key: 5 }, { token: 'phc_q' })).to.equal('phc_q')
      expect(tokenOf({}, {})).to.equal(undefined)
    })
  })

  describe('readFlagsBody', () => {
    it('resolves the aliases of flags.md §7.3 to one name each', () => {
      const fields = readFlagsBody({
        $distinct_id: 'u',
        $groups: { company: 'acme' },
        $properties: { plan: 'pro' },
        $group_properties: { company: { seats: 3 } },
        $anon_distinct_id: 'anon',
        device_id: 'dev',
        flag_keys_to_evaluate: ['a'],
        evaluation_environments: ['web'],
      })
      expect(fields).to.deep.equal({
        distinct_id: 'u',
        groups: { company: 'acme' },
        person_properties: { plan: 'pro' },
        group_properties: { company: { seats: 3 } },
        anon_distinct_id: 'anon',
        device_id: 'dev',
        flag_keys: ['a'],
        evaluation_contexts: ['web'],
      })
    })

    it('prefers the plain name over its alias', () => {
      expect(
        readFlagsBody({ distinct_id: 'plain', $distinct_id: 'alias', flag_keys: ['x'], flag_keys_to_evaluate: ['y'] }),
      ).to.include({ distinct_id: 'plain' })
    })

    it('accepts an empty and a numeric distinct_id', () => {
      expect(readFlagsBody({ distinct_id: '' }).distinct_id).to.equal('')
      expect(readFlagsBody({ distinct_id: 8675309 }).distinct_id).to.equal(8675309)
    })

    it('answers 400 naming distinct_id when it is missing or null', () => {
      const missing = httpError(() => readFlagsBody({ token: 'x' }))
      expect([missing.status, missing.attr]).to.deep.equal([400, 'distinct_id'])
      expect(httpError(() => readFlagsBody({ distinct_id: null })).attr).to.equal('distinct_id')
    })

    it('answers 400 naming the field of a wrongly typed value', () => {
      expect(httpError(() => readFlagsBody({ distinct_id: 'u', groups: 'acme' })).attr).to.equal('groups')
      expect(httpError(() => readFlagsBody({ distinct_id: 'u', group_properties: { company: 3 } })).attr).to.equal(
        'group_properties.company',
      )
      expect(httpError(() => readFlagsBody({ distinct_id: 'u', flag_keys: [1] })).attr).to.equal('flag_keys.0')
    })

    it('accepts null for the optional objects, as posthog-python sends device_id: null', () => {
      expect(readFlagsBody({ distinct_id: 'u', device_id: null, groups: null })).to.deep.equal({
        distinct_id: 'u',
        device_id: null,
        groups: null,
      })
    })
  })
})
