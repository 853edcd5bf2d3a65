/**
 * What one hostile event can cost, through real HTTP with the default plugins: the ingestion
 * warnings it writes, the ids it stores, the person work it causes, all bounded whatever it
 * holds (issue 23, items 1 and 6). Asserts on counts and sizes, not timings. The per-event size
 * limit would refuse the largest of these events with 413 before any step ran
 * (oversized-event.test.ts); it is raised here so that the bounds behind it are what is tested.
 */
import { expect } from 'chai'
import { calculateObjectSize } from 'bson'
import { startTestService, storedEvents } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { defaultPlugins } from '../helpers/default-plugins.ts'

const keys = (n: number, prefix: string) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 'v']))

describe('what one hostile event can cost', function () {
  this.timeout(120_000)
  let t: TestService
  beforeEach(async () => {
    t = await startTestService({ plugins: defaultPlugins(), server: { eventLimitBytes: 64 * 1024 * 1024 } })
  })
  afterEach(async () => t?.close())

  async function capture(...events: Array<Record<string, unknown>>): Promise<number> {
    const response = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: t.project.api_token, batch: events }),
      headers: { 'Content-Type': 'application/json' },
    })
    await response.text()
    return response.status
  }
  const warnings = () =>
    t.service.storage.db.collection('ingestion_warnings').find({ project_id: t.project.id }).toArray()

  for (const types of [2_000, 20_000]) {
    it(`records one warning of a few KB for an event naming ${types.toLocaleString('en')} group types, and stores the event with five`, async () => {
      expect(
        await capture({ event: 'e', distinct_id: 'attacker', properties: { $groups: keys(types, 'type_') } }),
      ).to.equal(200)
      const written = await warnings()
      expect(written.map((w) => w.type)).to.deep.equal(['group_type_limit_reached'])
      expect(written[0]!.details).to.include({ group_type: 'type_5', refused_count: types - 5, max_group_types: 5 })
      expect(written[0]!.event).to.include({ truncated: true, event: 'e' })
      expect(calculateObjectSize(written[0]!)).to.be.lessThan(8 * 1024)
      const [stored] = await storedEvents(t)
      const columns = Object.keys(stored!.properties as object).filter((key) => /^\$group_\d$/.test(key))
      expect(columns).to.have.length(5)
    })
  }

  it('applies 1,000 keys of a $set of 100,000 with one warning, and the event is stored', async () => {
    expect(
      await capture({ event: '$set', distinct_id: 'attacker', properties: { $set: keys(100_000, 'k') } }),
    ).to.equal(200)
    const written = await warnings()
    expect(written.map((w) => w.type)).to.deep.equal(['person_update_keys_limit_reached'])
    expect(written[0]!.details).to.deep.equal({ set_keys: 100_000, max_keys: 1000 })
    expect(calculateObjectSize(written[0]!)).to.be.lessThan(8 * 1024)
    const person = (await (
      await t.admin('GET', `/api/projects/${t.project.id}/persons?distinct_id=attacker`)
    ).json()) as { properties: Record<string, unknown> }
    expect(Object.keys(person.properties).filter((key) => /^k\d+$/.test(key))).to.have.length(1000)
    expect(await storedEvents(t)).to.have.length(1)
  })

  it('stores a 5 MiB $anon_distinct_id and alias as ids of 200 characters', async () => {
    const long = 'a'.repeat(5 * 1024 * 1024)
    expect(
      await capture(
        { event: '$identify', distinct_id: 'user', properties: { $anon_distinct_id: long } },
        { event: '$create_alias', distinct_id: 'user', properties: { alias: `b${long}` } },
      ),
    ).to.equal(200)
    const ids = await t.service.storage.db
      .collection('person_distinct_ids')
      .find({ project_id: t.project.id })
      .toArray()
    expect(ids.map((row) => String(row.distinct_id).length).sort()).to.deep.equal([200, 200, 4])
  })

  it('stores an event once when a retry sends its uuid in the other case', async () => {
    const uuid = '0190A000-0000-7000-8000-0000000000AB'
    expect(await capture({ event: 'e', distinct_id: 'd', uuid })).to.equal(200)
    expect(await capture({ event: 'e', distinct_id: 'd', uuid: uuid.toLowerCase() })).to.equal(200)
    expect(await capture({ event: 'e', distinct_id: 'd', uuid })).to.equal(200)
    const stored = await storedEvents(t)
    expect(stored.map((event) => event.uuid)).to.deep.equal([uuid.toLowerCase()])
  })
})
