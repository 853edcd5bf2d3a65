import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { defaultPlugins } from '../helpers/default-plugins.ts'

/** Property names that mean something to JavaScript objects or to MongoDB queries and updates. */
const HOSTILE = [
  '__proto__',
  'constructor',
  'prototype',
  '$where',
  '$gt',
  '$ne',
  '$set',
  '$inc',
  '$expr',
  'a.b',
  '.lead',
  'trail.',
  '$',
  '',
]

const hostileObject = (value: unknown): string =>
  `{${HOSTILE.map((k) => `${JSON.stringify(k)}:${JSON.stringify(value)}`).join(',')}}`

describe('hostile property names', function () {
  this.timeout(30_000)
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: defaultPlugins() })
  })
  after(async () => {
    await t?.close()
    expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').to.equal(undefined)
  })

  const capture = (body: string) => fetch(`${t.url}/i/v0/e/`, { method: 'POST', body })

  it('stores them as plain data in events and persons, and pollutes no prototype', async () => {
    const token = t.project.api_token
    const polluter = { polluted: 'yes', prototype: { polluted: 'yes' } }
    const props = hostileObject(polluter)
    const body = `{"api_key":"${token}","batch":[
      {"event":"e1","distinct_id":"victim","uuid":"0190a6c2-0000-7000-8000-000000000001","properties":${props}},
      {"event":"$identify","distinct_id":"attacker","uuid":"0190a6c2-0000-7000-8000-000000000002","properties":{"$set":${props},"$set_once":${props},"$unset":["__proto__","constructor","$where"]}},
      {"event":"e2","distinct_id":"attacker","uuid":"0190a6c2-0000-7000-8000-000000000003","$set":${props},"properties":{"$groups":${hostileObject('g')}}}
    ]}`
    const response = await capture(body)
    expect([200, 400]).to.include(response.status)
    expect(response.status, await response.clone().text()).to.equal(200)
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
    expect((Object.prototype as Record<string, unknown>).polluted).to.equal(undefined)

    const events = await t.service.storage.db
      .collection('events')
      .find({ project_id: t.project.id })
      .sort({ uuid: 1 })
      .toArray()
    expect(events.map((e) => e.event)).to.deep.equal(['e1', '$identify', 'e2'])
    const first = events[0]!.properties as Record<string, unknown>
    expect(Object.getPrototypeOf(first)).to.equal(Object.prototype)
    for (const key of HOSTILE.filter((k) => k !== '__proto__'))
      expect(Object.hasOwn(first, key), `event property ${JSON.stringify(key)}`).to.equal(true)
    const persons = await t.service.storage.db.collection('persons').find({ project_id: t.project.id }).toArray()
    const attacker = persons.find((p) => Object.hasOwn(p.properties as object, 'a.b'))
    expect(attacker, 'the person $set with hostile names').to.not.equal(undefined)
    for (const key of HOSTILE.filter((k) => !['__proto__', 'constructor', '$where'].includes(k))) {
      expect(Object.hasOwn(attacker!.properties as object, key), `person property ${JSON.stringify(key)}`).to.equal(
        true,
      )
    }
  })

  it('does not let a distinct_id or a property value act as a query operator', async () => {
    const token = t.project.api_token
    await capture(
      `{"api_key":"${token}","event":"e","distinct_id":"someone-else","properties":{"$set":{"secret":"s"}}}`,
    )
    for (const distinct of ['{"$ne":null}', '{"$gt":""}', '{"$where":"true"}', '["victim","someone-else"]']) {
      const response = await capture(
        `{"api_key":"${token}","event":"probe","distinct_id":${distinct},"properties":{"$set":{"hijacked":true}}}`,
      )
      expect(response.status).to.be.oneOf([200, 400])
    }
    const hijacked = await t.service.storage.db
      .collection('persons')
      .find({ project_id: t.project.id, 'properties.hijacked': true })
      .toArray()
    const victims = hijacked.filter((p) => (p.properties as Record<string, unknown>).secret === 's')
    expect(victims, 'a person reached through an operator').to.have.length(0)
    const flags = await fetch(`${t.url}/flags/?v=2`, {
      method: 'POST',
      body: `{"api_key":"${token}","distinct_id":{"$ne":null},"person_properties":${hostileObject({ polluted: 'yes' })},"groups":${hostileObject('x')}}`,
    })
    expect(flags.status).to.be.oneOf([200, 400])
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
  })

  it('answers flags for hostile person property names without error', async () => {
    const response = await fetch(`${t.url}/flags/?v=2`, {
      method: 'POST',
      body: `{"api_key":"${t.project.api_token}","distinct_id":"victim","person_properties":${hostileObject('v')},"group_properties":{"__proto__":{"polluted":"yes"}}}`,
    })
    expect(response.status).to.equal(200)
    expect(((await response.json()) as { errorsWhileComputingFlags: boolean }).errorsWhileComputingFlags).to.equal(
      false,
    )
  })
})
