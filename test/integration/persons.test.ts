import { expect } from 'chai'
import { startTestService, storedEvents } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'

const PLUGINS = [{ plugin: 'validate' }, { plugin: 'persons' }, { plugin: 'sink-mongo', required: true }]

interface PersonJson {
  id: string
  distinct_ids: string[]
  properties: Record<string, unknown>
  is_identified: boolean
  created_at: string
}

describe('persons end to end', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: PLUGINS })
  })
  after(() => t.close())

  const send = async (events: Array<Record<string, unknown>>, service: TestService = t) => {
    const response = await fetch(`${service.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: t.project.api_token, batch: events }),
    })
    expect(response.status, await response.clone().text()).to.equal(200)
  }
  const person = async (distinctId: string): Promise<PersonJson | undefined> => {
    const response = await t.admin(
      'GET',
      `/api/projects/${t.project.id}/persons?distinct_id=${encodeURIComponent(distinctId)}`,
    )
    if (response.status === 404) return undefined
    expect(response.status).to.equal(200)
    return (await response.json()) as PersonJson
  }
  const eventsOf = (distinctId: string) => storedEvents(t, `&distinct_id=${encodeURIComponent(distinctId)}`)
  const warnings = async () => {
    const response = await t.admin('GET', `/api/projects/${t.project.id}/ingestion_warnings`)
    return ((await response.json()) as { results: Array<{ type: string; details: Record<string, unknown> }> }).results
  }

  it('merges anonymous browsing into the identified person on $identify, with $set and $set_once applied', async () => {
    await send([
      {
        event: '$pageview',
        distinct_id: 'anon-1',
        properties: { $current_url: 'https://shop.test/', $browser: 'Firefox', utm_source: 'newsletter' },
      },
      {
        event: '$pageview',
        distinct_id: 'anon-1',
        properties: { $current_url: 'https://shop.test/pricing', $browser: 'Firefox' },
      },
    ])
    // posthog-js puts $set / $set_once at the top level of $identify
    await send([
      {
        event: '$identify',
        distinct_id: 'user-1',
        properties: { $anon_distinct_id: 'anon-1' },
        $set: { email: 'ada@shop.test' },
        $set_once: { signup: 'web' },
      },
    ])
    const merged = await person('user-1')
    expect(merged).to.deep.include({ distinct_ids: ['anon-1', 'user-1'], is_identified: true })
    expect(merged!.properties).to.include({
      email: 'ada@shop.test',
      signup: 'web',
      $initial_utm_source: 'newsletter',
      $initial_current_url: 'https://shop.test/',
      $browser: 'Firefox',
    })
    expect((await person('anon-1'))?.id).to.equal(merged!.id)
    const history = [...(await eventsOf('anon-1')), ...(await eventsOf('user-1'))]
    expect(history).to.have.length(3)
    expect(new Set(history.map((e) => e.person_id))).to.deep.equal(new Set([merged!.id]))
    const identify = (await eventsOf('user-1'))[0]
    expect(identify.person_properties).to.include({ email: 'ada@shop.test' })
    expect(identify.person_mode).to.equal('full')
  })

  it('follows an alias chain to one person', async () => {
    await send([{ event: 'signup', distinct_id: 'chain-a' }])
    await send([{ event: '$create_alias', distinct_id: 'chain-b', properties: { alias: 'chain-a' } }])
    await send([{ event: '$create_alias', distinct_id: 'chain-c', properties: { alias: 'chain-b' } }])
    await send([{ event: 'paid', distinct_id: 'chain-c', properties: { $set: { plan: 'pro' } } }])
    const chained = await person('chain-a')
    expect(chained).to.deep.include({ distinct_ids: ['chain-a', 'chain-b', 'chain-c'], is_identified: true })
    expect(chained!.properties).to.include({ plan: 'pro' })
  })

  it('refuses to merge an identified person away, and shows the warning through the admin API', async () => {
    await send([{ event: '$identify', distinct_id: 'ident-1', properties: { $anon_distinct_id: 'ident-1-anon' } }])
    await send([{ event: '$identify', distinct_id: 'ident-2', properties: { $anon_distinct_id: 'ident-2-anon' } }])
    await send([{ event: '$identify', distinct_id: 'ident-2', properties: { $anon_distinct_id: 'ident-1' } }])
    expect((await person('ident-1'))?.distinct_ids).to.deep.equal(['ident-1', 'ident-1-anon'])
    expect((await person('ident-2'))?.distinct_ids).to.deep.equal(['ident-2', 'ident-2-anon'])
    const refused = (await warnings()).find((w) => w.type === 'cannot_merge_already_identified')
    expect(refused?.details).to.include({ sourcePersonDistinctId: 'ident-1', targetPersonDistinctId: 'ident-2' })
    await send([{ event: '$identify', distinct_id: 'ident-3', properties: { $anon_distinct_id: 'guest' } }])
    expect(
      (await warnings()).some(
        (w) => w.type === 'cannot_merge_with_illegal_distinct_id' && w.details.illegalDistinctId === 'guest',
      ),
    ).to.equal(true)
    expect(await person('guest')).to.equal(undefined)
  })

  it('lands every update from parallel requests for one person through two of its distinct ids', async () => {
    await send([{ event: '$identify', distinct_id: 'par-user', properties: { $anon_distinct_id: 'par-anon' } }])
    await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        send([
          { event: 'set', distinct_id: i % 2 ? 'par-user' : 'par-anon', properties: { $set: { [`key${i}`]: i } } },
        ]),
      ),
    )
    const updated = await person('par-user')
    for (let i = 0; i < 16; i++) expect(updated!.properties[`key${i}`], `key${i}`).to.equal(i)
  })

  it('lands every update when two service processes share the database', async () => {
    const second = await startTestService({
      plugins: PLUGINS,
      storage: { database: t.service.config.storage.database },
    })
    try {
      await send([{ event: 'first', distinct_id: 'two-proc' }])
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          send([{ event: 'set', distinct_id: 'two-proc', properties: { $set: { [`p${i}`]: i } } }], i % 2 ? second : t),
        ),
      )
      const updated = await person('two-proc')
      for (let i = 0; i < 12; i++) expect(updated!.properties[`p${i}`], `p${i}`).to.equal(i)
      await Promise.all([
        send([{ event: 'rush', distinct_id: 'two-proc-new' }]),
        send([{ event: 'rush', distinct_id: 'two-proc-new' }], second),
      ])
      const rushed = await eventsOf('two-proc-new')
      expect(rushed).to.have.length(2)
      expect(rushed[0].person_id).to.equal(rushed[1].person_id)
    } finally {
      await second.service.close() // the first service drops the shared database
    }
  })

  it('stores personless events under the fake person, and a later identify adopts them', async () => {
    await send([
      {
        event: '$pageview',
        distinct_id: 'pl-anon',
        properties: { $process_person_profile: false, $set: { ignored: true }, $browser: 'Safari' },
      },
      { event: '$pageview', distinct_id: 'pl-anon', properties: { $process_person_profile: false } },
    ])
    expect(await person('pl-anon')).to.equal(undefined)
    const personless = await eventsOf('pl-anon')
    expect(personless.map((e) => e.person_mode)).to.deep.equal(['propertyless', 'propertyless'])
    expect(personless[0].person_properties).to.deep.equal({})
    const storedDoc = await t.service.storage.db
      .collection('events')
      .findOne({ project_id: t.project.id, uuid: personless[0].uuid })
    expect(storedDoc?.person_created_at).to.deep.equal(new Date('1970-01-01T00:00:05Z'))
    expect(personless.some((e) => (e.properties as Record<string, unknown>).$set !== undefined)).to.equal(false)
    await send([
      {
        event: '$identify',
        distinct_id: 'pl-user',
        properties: { $anon_distinct_id: 'pl-anon', $set: { name: 'Bo' } },
      },
    ])
    const adopted = await person('pl-user')
    expect(adopted).to.deep.include({
      id: personless[0].person_id,
      distinct_ids: ['pl-anon', 'pl-user'],
      is_identified: true,
    })
    expect(adopted!.properties).to.include({ name: 'Bo' }).and.not.have.property('ignored')
    await send([{ event: '$pageview', distinct_id: 'pl-anon', properties: { $process_person_profile: false } }])
    expect((await eventsOf('pl-anon'))[0]).to.include({ person_id: adopted!.id, person_mode: 'propertyless' })
  })

  it('stores and reads back $-prefixed, dotted, __proto__ and constructor property names exactly', async () => {
    const body = `{"api_key": ${JSON.stringify(t.project.api_token)}, "batch": [{"event": "$set", "distinct_id": "hostile", "properties": {"$set": {"__proto__": {"polluted": true}, "constructor": "ctor", "a.b": 1, "$browser": "Lynx", "x": {"c.d": {"$e": 2}}}}}]}`
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    })
    expect(response.status).to.equal(200)
    const raw = await (await t.admin('GET', `/api/projects/${t.project.id}/persons?distinct_id=hostile`)).text()
    const stored = JSON.parse(raw) as PersonJson
    expect(Object.keys(stored.properties).sort()).to.include.members([
      '$browser',
      '__proto__',
      'a.b',
      'constructor',
      'x',
    ])
    expect(raw).to.contain('"__proto__":{"polluted":true}')
    expect(stored.properties).to.include({ constructor: 'ctor', 'a.b': 1, $browser: 'Lynx' })
    expect(stored.properties.x).to.deep.equal({ 'c.d': { $e: 2 } })
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
    const event = (await eventsOf('hostile'))[0]
    expect(event.person_properties).to.include({ constructor: 'ctor', 'a.b': 1 })
  })

  it('answers 404 for an unknown distinct id, 400 without one, and 401 without the admin key', async () => {
    expect((await t.admin('GET', `/api/projects/${t.project.id}/persons?distinct_id=nobody`)).status).to.equal(404)
    expect((await t.admin('GET', `/api/projects/${t.project.id}/persons`)).status).to.equal(400)
    expect((await fetch(`${t.url}/api/projects/${t.project.id}/persons?distinct_id=user-1`)).status).to.equal(401)
  })
})
