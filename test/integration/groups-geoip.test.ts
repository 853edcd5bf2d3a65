import { expect } from 'chai'
import { startTestService, storedEvents } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'

const PLUGINS = [
  { plugin: 'validate' },
  { plugin: 'spike-detection', options: { windowSeconds: 60, maxEventsPerWindow: 3 } },
  { plugin: 'geoip' },
  { plugin: 'persons' },
  { plugin: 'group-update' },
  { plugin: 'sink-mongo', required: true },
]

interface Warning {
  type: string
  details: Record<string, unknown>
}

describe('groups, GeoIP and spike detection end to end', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: PLUGINS })
  })
  after(() => t.close())

  const send = async (events: Array<Record<string, unknown>>, headers: Record<string, string> = {}) => {
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ api_key: t.project.api_token, batch: events }),
    })
    expect(response.status, await response.clone().text()).to.equal(200)
  }
  const latest = async (distinctId: string) =>
    (await storedEvents(t, `&distinct_id=${encodeURIComponent(distinctId)}`))[0]
  const propertiesOf = async (distinctId: string) => (await latest(distinctId)).properties as Record<string, unknown>
  const api = async (path: string) => {
    const response = await t.admin('GET', `/api/projects/${t.project.id}${path}`)
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  const warnings = async (type: string) =>
    ((await api('/ingestion_warnings?limit=1000')).body.results as Warning[]).filter((w) => w.type === type)
  const groupIdentify = (
    type: string,
    key: unknown,
    set?: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => ({
    event: '$groupidentify',
    distinct_id: `$${type}_${String(key)}`,
    properties: {
      $group_type: type,
      $group_key: key,
      ...(set ? { $group_set: set } : {}),
      $groups: { [type]: key },
      ...extra,
    },
  })

  describe('groups', () => {
    it('creates a group on $groupidentify, merges later sets, and serves it through the admin API', async () => {
      await send([groupIdentify('company', 'acme', { name: 'Acme', seats: 5 })])
      await send([groupIdentify('company', 'acme', { seats: 6, $browser: 'x', 'a.b': 1 })])
      const { status, body } = await api('/groups?group_type=company&group_key=acme')
      expect(status).to.equal(200)
      expect(body).to.deep.include({ group_type: 'company', group_type_index: 0, group_key: 'acme', version: 2 })
      expect(body.group_properties).to.deep.equal({ name: 'Acme', seats: 6, $browser: 'x', 'a.b': 1 })
      const types = (await api('/group_types')).body.results as Array<Record<string, unknown>>
      expect(types).to.have.length(1)
      expect(types[0]).to.include({ group_type: 'company', group_type_index: 0 })
      expect(Date.parse(types[0].created_at as string)).to.be.closeTo(Date.now(), 60_000)
      expect((await api('/groups?group_type=company')).body.results).to.have.length(1)
    })

    it('stores $groupidentify without $set, $set_once or $unset, so the group person gets none of them', async () => {
      // posthog-js style top-level $set as well as posthog-node style inside properties
      await send([
        {
          ...groupIdentify(
            'company',
            'strip',
            { name: 'S' },
            { $set: { leaked: true }, $set_once: { once: 1 }, $unset: ['x'] },
          ),
          $set: { top: true },
        },
      ])
      const properties = await propertiesOf('$company_strip')
      expect(properties).not.to.have.any.keys('$set', '$set_once', '$unset')
      expect(properties).to.include({ $group_0: 'strip' })
      const person = (await api(`/persons?distinct_id=${encodeURIComponent('$company_strip')}`)).body
      expect(person.properties).not.to.have.any.keys('leaked', 'once', 'top')
    })

    it('attaches events to the groups in $groups as $group_N, creating the type but not the group', async () => {
      await send([
        {
          event: 'report viewed',
          distinct_id: 'member-1',
          properties: { $groups: { company: 'acme', project: 'p-42' } },
        },
      ])
      expect(await propertiesOf('member-1')).to.include({ $group_0: 'acme', $group_1: 'p-42' })
      const types = (await api('/group_types')).body.results as Array<{ group_type: string; group_type_index: number }>
      expect(types.map((m) => [m.group_type, m.group_type_index])).to.deep.include(['project', 1])
      expect((await api('/groups?group_type=project&group_key=p-42')).status).to.equal(404)
    })

    it('gives personless events no $group_N', async () => {
      await send([
        {
          event: 'anonymous view',
          distinct_id: 'ghost',
          properties: { $process_person_profile: false, $groups: { company: 'acme' }, $group_0: 'forged' },
        },
      ])
      expect(await propertiesOf('ghost')).not.to.have.any.keys('$group_0', '$group_1')
    })

    it('refuses a sixth group type with a warning and still stores the event', async () => {
      for (const type of ['team', 'region', 'plan']) await send([groupIdentify(type, 'k')])
      await send([groupIdentify('sixth', 'k', { a: 1 })])
      expect(await latest('$sixth_k')).to.exist
      expect((await api('/group_types')).body.results).to.have.length(5)
      expect((await api('/groups?group_type=sixth&group_key=k')).status).to.equal(404)
      const refused = await warnings('group_type_limit_reached')
      expect(refused.map((w) => w.details.group_type)).to.deep.equal(['sixth'])
    })

    it('drops a $groupidentify whose key is over 400 characters, with group_key_too_long', async () => {
      await send([groupIdentify('company', 'k'.repeat(401), { a: 1 }, { marker: 'too-long' })])
      expect(await storedEvents(t, `&distinct_id=${encodeURIComponent(`$company_${'k'.repeat(401)}`)}`)).to.have.length(
        0,
      )
      expect(await warnings('group_key_too_long')).to.have.length(1)
    })
  })

  describe('GeoIP', () => {
    it('adds $geoip_* for a known public $ip and sets the person properties through $set and $set_once', async () => {
      await send([{ event: '$pageview', distinct_id: 'visitor-gb', properties: { $ip: '81.2.69.142' } }])
      expect(await propertiesOf('visitor-gb')).to.include({
        $geoip_country_code: 'GB',
        $geoip_country_name: 'United Kingdom',
        $geoip_continent_code: 'EU',
      })
      const person = (await api('/persons?distinct_id=visitor-gb')).body
      expect(person.properties).to.include({
        $geoip_country_code: 'GB',
        $initial_geoip_country_code: 'GB',
        $geoip_postal_code: null,
      })
    })

    it('uses X-Forwarded-For when the event has no $ip', async () => {
      await send([{ event: '$pageview', distinct_id: 'visitor-us' }], { 'X-Forwarded-For': '8.8.8.8, 10.0.0.1' })
      expect(await propertiesOf('visitor-us')).to.include({ $ip: '8.8.8.8', $geoip_country_code: 'US' })
    })

    it('skips $geoip_disable and private addresses', async () => {
      await send([
        { event: 'server event', distinct_id: 'server-side', properties: { $ip: '81.2.69.142', $geoip_disable: true } },
        { event: '$pageview', distinct_id: 'office', properties: { $ip: '192.168.1.20' } },
      ])
      for (const id of ['server-side', 'office'])
        expect(
          Object.keys(await propertiesOf(id)).filter((k) => k.startsWith('$geoip_') && k !== '$geoip_disable'),
          id,
        ).to.deep.equal([])
    })
  })

  describe('spike detection', () => {
    it('stores every event of a burst, marks those over the rate, counts them and warns once', async () => {
      await send(Array.from({ length: 6 }, (_, i) => ({ event: 'tick', distinct_id: 'hot-key', properties: { n: i } })))
      const events = await storedEvents(t, '&distinct_id=hot-key')
      expect(events).to.have.length(6)
      const marked = events
        .filter((e) => (e.properties as Record<string, unknown>).$overflow === true)
        .map((e) => (e.properties as Record<string, unknown>).n)
      expect(marked.sort()).to.deep.equal([3, 4, 5])
      expect((await warnings('event_overflow')).map((w) => w.details.distinct_id)).to.deep.equal(['hot-key'])
      const metrics = await (await fetch(`${t.url}/_metrics`)).text()
      expect(metrics).to.match(new RegExp(`hedgerow_events_overflow_total\\{project="${t.project.id}"\\} [3-9]`))
    })

    it('never counts a historical migration', async () => {
      const old = new Date(Date.now() - 7 * 86_400_000).toISOString()
      const batch = Array.from({ length: 6 }, (_, i) => ({
        event: 'import',
        distinct_id: 'imported',
        timestamp: old,
        properties: { n: i },
      }))
      const response = await fetch(`${t.url}/batch/`, {
        method: 'POST',
        body: JSON.stringify({ api_key: t.project.api_token, historical_migration: true, batch }),
      })
      expect(response.status).to.equal(200)
      const events = await storedEvents(t, '&distinct_id=imported')
      expect(events).to.have.length(6)
      expect(events.filter((e) => (e.properties as Record<string, unknown>).$overflow)).to.have.length(0)
    })
  })
})
