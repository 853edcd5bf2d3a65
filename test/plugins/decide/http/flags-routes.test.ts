import { expect } from 'chai'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import type { TestService } from '../../../helpers/service.ts'
import {
  postFlags,
  putDefinitions,
  rebuildBody,
  recorded,
  recordedDefinitions,
  startDecideService,
} from './fixtures.ts'
import type { RecordedRequest } from './fixtures.ts'

type Json = Record<string, any>

const EXTRA_FLAGS = [
  {
    id: 6,
    key: 'deleted-flag',
    active: true,
    deleted: true,
    filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
  },
  {
    id: 7,
    key: 'client-only',
    active: true,
    evaluation_runtime: 'client',
    filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
  },
]
const ACTIVE_KEYS = ['beta-feature', 'multivariate-flag', 'person-prop-flag', 'group-flag']

describe('decide /flags and /decide', () => {
  let t: TestService
  before(async () => {
    t = await startDecideService()
    const definitions = recordedDefinitions()
    const response = await putDefinitions(t, {
      ...definitions,
      flags: [...(definitions.flags as unknown[]), ...EXTRA_FLAGS],
    })
    expect(response.status, await response.clone().text()).to.equal(200)
  })
  after(() => t.close())

  const flags = (body: Json, path = '/flags/?v=2', headers: Record<string, string> = {}) =>
    postFlags(t, path, { token: t.project.api_token, ...body }, headers).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as Json,
    }))

  describe('the recorded SDK requests, replayed against the recorded definitions', () => {
    const requests = ['node-requests.jsonl', 'python-requests.jsonl', 'browser-requests.jsonl'].flatMap((file) =>
      recorded(file).filter((r) => /^\/flags\/?$/.test(r.path) && r.body.json !== undefined),
    )

    it('holds requests from the three SDKs', () => {
      expect(new Set(requests.map((r) => r.headers['user-agent']?.split('/')[0]))).to.have.length(3)
    })

    for (const request of requests) {
      it(`answers seq ${request.seq} (${request.headers['user-agent']?.slice(0, 20)}, ${request.body.steps.join('+') || 'JSON'}) as the spec says`, async () => {
        const response = await fetch(t.url + request.url, {
          method: request.method,
          headers: {
            'Content-Type': request.headers['content-type'] ?? 'application/json',
            'User-Agent': request.headers['user-agent'] ?? '',
          },
          body: new Uint8Array(rebuildBody(request, t.project.api_token)),
        })
        expect(response.status).to.equal(200)
        const body = (await response.json()) as Json
        expectSpecAnswer(request, body)
      })
    }
  })

  /** What flags.md says the recorded definitions give for this request body. */
  function expectSpecAnswer(request: RecordedRequest, body: Json): void {
    const sent = request.body.json as Json
    const browser = /Mozilla/.test(request.headers['user-agent'] ?? '')
    const evaluated = browser ? [...ACTIVE_KEYS, 'client-only'] : ACTIVE_KEYS
    const asked = sent.flag_keys_to_evaluate as string[] | undefined
    const wanted = asked ? evaluated.filter((key) => asked.includes(key)) : evaluated
    expect(Object.keys(body.flags).sort()).to.deep.equal([...wanted].sort())
    expect(body).to.include({ errorsWhileComputingFlags: false }).and.to.have.property('requestId')
    if (body.flags['beta-feature'])
      expect(body.flags['beta-feature']).to.deep.include({
        enabled: true,
        metadata: { id: 1, version: 3, description: null, payload: '{"color":"blue"}', has_experiment: false },
      })
    if (body.flags['person-prop-flag'])
      expect(body.flags['person-prop-flag'].enabled).to.equal(sent.person_properties?.plan === 'pro')
    if (body.flags['group-flag']) {
      const tech = sent.groups?.company !== undefined && sent.group_properties?.company?.industry === 'tech'
      expect(body.flags['group-flag']).to.deep.include({
        enabled: tech,
        reason: tech
          ? { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' }
          : body.flags['group-flag'].reason,
      })
      if (sent.groups?.company === undefined) expect(body.flags['group-flag'].reason.code).to.equal('no_group_type')
    }
    if (body.flags['multivariate-flag']) {
      const { variant, metadata } = body.flags['multivariate-flag']
      expect(variant).to.be.oneOf(['control', 'test'])
      expect(metadata.payload).to.equal(JSON.stringify({ variant }))
    }
  }

  describe('response shapes', () => {
    const person = { distinct_id: 'user-1', person_properties: { plan: 'pro' } }

    it('/flags?v=2 and /decide?v=4: per-flag records; inactive, deleted and other-runtime flags absent', async () => {
      for (const path of ['/flags/?v=2', '/decide/?v=4']) {
        const { body } = await flags({ ...person, evaluation_runtime: 'server' }, path)
        expect(Object.keys(body.flags).sort(), path).to.deep.equal([...ACTIVE_KEYS].sort())
        expect(body.flags['person-prop-flag'].metadata.payload).to.equal('"pro-payload"')
        expect(body.evaluatedAt).to.be.a('number')
      }
    })

    it('answers JSON with its content type, whichever shape', async () => {
      for (const path of ['/flags/?v=2', '/flags/?v=3', '/flags', '/decide/?v=4', '/decide/']) {
        const response = await postFlags(t, path, { token: t.project.api_token, ...person })
        expect(response.headers.get('content-type'), path).to.equal('application/json; charset=utf-8')
        expect(await response.json(), path).to.be.an('object')
      }
    })

    it('evaluates a client-runtime flag for a browser and leaves it out for posthog-node', async () => {
      const browser = await flags(person, '/flags/?v=2', { 'User-Agent': 'Mozilla/5.0 (X11) Chrome/156' })
      expect(browser.body.flags).to.have.property('client-only')
      const node = await flags(person, '/flags/?v=2', { 'User-Agent': 'posthog-node/5.70.0' })
      expect(node.body.flags).to.not.have.property('client-only')
    })

    it('/flags without v and v=1, and /decide?v=3: featureFlags with every flag, featureFlagPayloads of matches', async () => {
      for (const path of ['/flags', '/flags/?v=1', '/decide/?v=3']) {
        const { body } = await flags({ ...person, evaluation_runtime: 'server' }, path)
        expect(body.featureFlags, path).to.include({
          'beta-feature': true,
          'person-prop-flag': true,
          'group-flag': false,
        })
        expect(body.featureFlags['multivariate-flag']).to.be.oneOf(['control', 'test'])
        expect(body.featureFlagPayloads).to.include({
          'beta-feature': '{"color":"blue"}',
          'person-prop-flag': '"pro-payload"',
        })
        expect(body.featureFlagPayloads).to.not.have.property('group-flag')
        expect(body).to.include({ errorsWhileComputingFlags: false })
      }
    })

    it('/decide?v=3 carries the contract of design.md §1', async () => {
      const { body } = await flags(person, '/decide/?v=3')
      expect(body).to.deep.include({
        config: { enable_collect_everything: true },
        toolbarParams: {},
        isAuthenticated: false,
        supportedCompression: ['gzip', 'lz64'],
        errorsWhileComputingFlags: false,
      })
      expect(body).to.have.property('featureFlags')
      expect(body).to.have.property('featureFlagPayloads')
    })

    it('/decide?v=2 lists enabled flags with values, /decide v=1 and no v their keys', async () => {
      const values = (await flags(person, '/decide/?v=2')).body.featureFlags
      expect(values).to.include({ 'beta-feature': true, 'person-prop-flag': true })
      expect(values).to.not.have.property('group-flag')
      for (const path of ['/decide/?v=1', '/decide/', '/decide']) {
        const keys = (await flags(person, path)).body.featureFlags
        expect(keys, path).to.include.members(['beta-feature', 'person-prop-flag'])
        expect(keys, path).to.not.include('group-flag')
      }
    })

    it('/flags?v=3: value per flag', async () => {
      const { body } = await flags(person, '/flags?v=3')
      expect(body.flags['beta-feature']).to.include({ value: true })
      expect(body.flags['group-flag']).to.include({ value: false })
    })

    it('/flags?v=2&config=true adds the remote config fields', async () => {
      const { body } = await flags(person, '/flags/?v=2&config=true')
      expect(body)
        .to.include({ hasFeatureFlags: true })
        .and.to.deep.include({ supportedCompression: ['gzip', 'gzip-js'] })
      expect(body).to.not.have.property('token')
    })
  })

  describe('request handling', () => {
    it('reads gzip, lz64, base64 forms, GET ?data= and JSON5 bodies', async () => {
      const json = JSON.stringify({ token: t.project.api_token, distinct_id: 'enc', flag_keys: ['beta-feature'] })
      const answers = await Promise.all([
        fetch(`${t.url}/flags/?v=2`, {
          method: 'POST',
          headers: { 'Content-Type': 'text/plain' },
          body: gzipSync(json),
        }),
        fetch(`${t.url}/flags/?v=2&compression=lz64`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: `data=${encodeURIComponent(LZString.compressToBase64(json))}`,
        }),
        fetch(`${t.url}/flags/?v=2&compression=base64`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`,
        }),
        fetch(`${t.url}/decide/?v=4&data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`),
        fetch(`${t.url}/flags/?v=2`, {
          method: 'POST',
          body: `{token: '${t.project.api_token}', distinct_id: 'enc', flag_keys: ['beta-feature'], person_properties: {n: NaN, i: Infinity},}`,
        }),
      ])
      for (const response of answers) {
        expect(response.status).to.equal(200)
        expect(((await response.json()) as Json).flags['beta-feature'].enabled).to.equal(true)
      }
    })

    it('takes the key as token, api_key or $token, and answers 401 when it is missing or unknown', async () => {
      for (const field of ['token', 'api_key', '$token']) {
        expect(
          (await postFlags(t, '/flags/?v=2', { [field]: t.project.api_token, distinct_id: 'u' })).status,
          field,
        ).to.equal(200)
      }
      expect((await postFlags(t, '/flags/?v=2', { distinct_id: 'u' })).status).to.equal(401)
      const unknown = await postFlags(t, '/flags/?v=2', { token: 'phc_nobody', distinct_id: 'u' })
      expect(unknown.status).to.equal(401)
      expect(await unknown.json()).to.include({ type: 'authentication_error', code: 'invalid_api_key' })
    })

    it('answers 400 without distinct_id, and accepts an empty one (hash 0: every rollout, first variant)', async () => {
      const missing = await postFlags(t, '/flags/?v=2', { token: t.project.api_token })
      expect(missing.status).to.equal(400)
      expect(await missing.json()).to.include({ attr: 'distinct_id' })
      const { status, body } = await flags({ distinct_id: '' })
      expect(status).to.equal(200)
      expect(body.flags['multivariate-flag'].variant).to.equal('control')
    })

    it('evaluates nothing with disable_flags, and only the asked flags with flag_keys', async () => {
      expect((await flags({ distinct_id: 'u', disable_flags: true })).body.flags).to.deep.equal({})
      expect(
        Object.keys((await flags({ distinct_id: 'u', flag_keys_to_evaluate: ['beta-feature', 'nope'] })).body.flags),
      ).to.deep.equal(['beta-feature'])
    })

    it('gives the same variant to the same id on every call, and spreads ids over both variants', async () => {
      const variants = new Set<string>()
      for (let i = 0; i < 12; i++) {
        const first = (await flags({ distinct_id: `spread-${i}`, flag_keys: ['multivariate-flag'] })).body.flags[
          'multivariate-flag'
        ].variant
        const again = (await flags({ distinct_id: `spread-${i}`, flag_keys: ['multivariate-flag'] })).body.flags[
          'multivariate-flag'
        ].variant
        expect(again).to.equal(first)
        variants.add(first)
      }
      expect([...variants].sort()).to.deep.equal(['control', 'test'])
    })

    it('answers browsers cross-origin with credentials', async () => {
      const response = await postFlags(
        t,
        '/flags/?v=2',
        { token: t.project.api_token, distinct_id: 'u' },
        { Origin: 'https://app.example' },
      )
      expect(response.headers.get('access-control-allow-origin')).to.equal('https://app.example')
      expect(response.headers.get('access-control-allow-credentials')).to.equal('true')
    })
  })
})
