import { expect } from 'chai'
import { creationProperties, updateEvent } from '../../../plugins/persons/update.ts'
import { resolveEvent } from '../../../plugins/persons/resolve.ts'
import { mergePersons } from '../../../plugins/persons/merge.ts'
import type { IngestEvent } from '../../../core/plugin-api.ts'
import { PersonStore } from '../../../plugins/persons/person-store.ts'
import { contextFor, nextProjectId, openPersonDb, personEvent, plain } from './fixtures.ts'
import type { PersonDb } from './fixtures.ts'
import { batching } from '../../../core/model/batching.ts'

const options = { skipFilteredWrites: true, setOnceFillsNull: true, maxKeysPerOperation: 1000 }
const resolveOptions = { forceUpgrade: true, forceUpgradeAfterMs: 60_000 }

describe('persons: the personUpdate step', () => {
  let t: PersonDb
  before(async () => {
    t = await openPersonDb('person-update')
  })
  after(() => t.close())

  /** Both person steps, as the pipeline runs them, with a store of their own (one "process"). */
  async function ingest(
    projectId: number,
    over: Partial<IngestEvent>,
    store: PersonStore = t.store(),
  ): Promise<IngestEvent> {
    const ctx = contextFor(projectId)
    const resolved = await resolveEvent(store, personEvent(over), ctx, resolveOptions)
    return (await updateEvent(store, resolved, ctx, options)) ?? resolved
  }
  const stored = async (projectId: number, distinctId: string) =>
    (await t.store().findByDistinctId(projectId, distinctId, new Date()))!

  it('applies $set and $set_once to a new person and shows them on the event', async () => {
    const projectId = nextProjectId()
    const event = await ingest(projectId, {
      distinctId: 'u',
      properties: { $set: { name: 'Ada' }, $set_once: { first: 'x' }, $browser: 'Firefox' },
    })
    const person = await stored(projectId, 'u')
    expect(plain(person.properties)).to.include({
      name: 'Ada',
      first: 'x',
      $browser: 'Firefox',
      $initial_browser: 'Firefox',
    })
    expect(person.version).to.equal(1)
    expect(plain(event.person!.properties)).to.deep.equal(plain(person.properties))
    expect(plain(event.properties.$set)).to.deep.equal({ name: 'Ada', $browser: 'Firefox' })
  })

  it('skips the write when nothing changes', async () => {
    const projectId = nextProjectId()
    await ingest(projectId, { distinctId: 'u', properties: { $set: { plan: 'pro' } } })
    const before = await stored(projectId, 'u')
    await ingest(projectId, { distinctId: 'u', properties: { $set: { plan: 'pro' }, $set_once: { plan: 'other' } } })
    expect((await stored(projectId, 'u')).version).to.equal(before.version)
  })

  it('does not write a change of fast-changing keys alone, but the event carries it over the stored properties', async () => {
    const projectId = nextProjectId()
    await ingest(projectId, { distinctId: 'u', properties: { $current_url: '/a' } })
    const before = await stored(projectId, 'u')
    const event = await ingest(projectId, { distinctId: 'u', properties: { $current_url: '/b' } })
    const after = await stored(projectId, 'u')
    expect(after.version).to.equal(before.version)
    expect(after.properties.$current_url).to.equal('/a')
    expect(event.person!.properties.$current_url).to.equal('/b')
  })

  it('lays the event $set over the person properties it stores, even when $unset removed the key', async () => {
    const projectId = nextProjectId()
    await ingest(projectId, { distinctId: 'u', properties: { $set: { a: 1, b: 2 } } })
    const event = await ingest(projectId, { distinctId: 'u', properties: { $set: { a: 5 }, $unset: ['a', 'b'] } })
    expect(plain((await stored(projectId, 'u')).properties)).to.not.have.any.keys('a', 'b')
    expect(event.person!.properties).to.include({ a: 5 })
  })

  it('ignores $unset on the event that creates the person', async () => {
    const projectId = nextProjectId()
    await ingest(projectId, { distinctId: 'u', properties: { $set: { a: 1 }, $unset: ['a'] } })
    expect((await stored(projectId, 'u')).properties).to.include({ a: 1 })
  })

  it('lands every key when many processes update one person at once', async () => {
    const projectId = nextProjectId()
    await ingest(projectId, { distinctId: 'u', properties: {} })
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        ingest(projectId, { distinctId: 'u', properties: { $set: { [`k${i}`]: i } } }),
      ),
    )
    const person = await stored(projectId, 'u')
    for (let i = 0; i < 12; i++) expect(person.properties[`k${i}`], `k${i}`).to.equal(i)
    expect(person.version).to.equal(12)
  })

  it('finds the person again when it was merged away between the two steps', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    await ingest(projectId, { distinctId: 'keep', properties: { $set: { kept: true } } })
    await ingest(projectId, { distinctId: 'gone', properties: {} })
    const ctx = contextFor(projectId)
    const resolved = await resolveEvent(
      store,
      personEvent({ distinctId: 'gone', properties: { $set: { late: 1 } } }),
      ctx,
      resolveOptions,
    )
    await mergePersons(t.store(), await stored(projectId, 'keep'), await stored(projectId, 'gone'))
    const updated = await updateEvent(store, resolved, ctx, options)
    const survivor = await stored(projectId, 'keep')
    expect(updated!.person!.id).to.equal(survivor.id)
    expect(survivor.properties).to.include({ kept: true, late: 1 })
  })

  it('strips and ignores person operations on $groupidentify, and applies none on $exception', async () => {
    const projectId = nextProjectId()
    const group = await ingest(projectId, {
      event: '$groupidentify',
      distinctId: '$company_acme',
      properties: { $group_type: 'company', $set: { a: 1 }, $unset: ['b'] },
    })
    expect(group.properties).to.deep.equal({ $group_type: 'company' })
    expect(plain((await stored(projectId, '$company_acme')).properties)).to.not.have.property('a')
    const exception = await ingest(projectId, { event: '$exception', distinctId: 'u', properties: { $set: { a: 1 } } })
    expect(plain((await stored(projectId, 'u')).properties)).to.not.have.property('a')
    expect(exception.person!.properties).to.include({ a: 1 })
  })

  it('leaves personless events alone', async () => {
    const projectId = nextProjectId()
    const store = t.store()
    const ctx = contextFor(projectId)
    const resolved = await resolveEvent(
      store,
      personEvent({ distinctId: 'p', personless: true, properties: { $browser: 'x' } }),
      ctx,
      resolveOptions,
    )
    expect(await updateEvent(store, resolved, ctx, options)).to.equal(undefined)
  })

  describe('with the creation properties the plugin sets up', () => {
    /** A store as the plugin sets it up: the aliasResolve step inserts a new person with what the personUpdate step would write. */
    const hookedStore = () =>
      new PersonStore(t.db, batching, (event, created) => creationProperties(event, created, options))
    const commands: Array<{ event: Partial<IngestEvent> }> = [
      {
        event: {
          distinctId: 'u',
          properties: {
            $set: { name: 'Ada' },
            $set_once: { first: 'x', name: 'ignored' },
            $browser: 'Firefox',
            $current_url: '/a',
          },
        },
      },
      { event: { distinctId: 'u', properties: { $set: { a: 1 }, $unset: ['a'], $set_once: { n: null } } } },
      { event: { distinctId: 'u', properties: { $current_url: '/only-filtered' } } },
      { event: { distinctId: 'u', properties: {} } },
      { event: { event: '$exception', distinctId: 'u', properties: { $set: { a: 1 } } } },
      { event: { event: '$snapshot', distinctId: 'u', properties: { $set: { a: 1 }, $browser: 'not lifted' } } },
      {
        event: {
          event: '$groupidentify',
          distinctId: '$company_acme',
          properties: { $group_type: 'company', $set: { a: 1 } },
        },
      },
      {
        event: {
          event: '$identify',
          distinctId: 'u',
          properties: { $anon_distinct_id: 'anon', $set: { email: 'a@b.c' }, $set_once: { first_seen: 1 } },
        },
      },
    ]

    it('creates the person with the properties the step would have written next, in one write', async () => {
      for (const { event } of commands) {
        const twoWrites = nextProjectId()
        const oneWrite = nextProjectId()
        const before = await ingest(twoWrites, event)
        const after = await ingest(oneWrite, event, hookedStore())
        const [written, inserted] = [
          await stored(twoWrites, event.distinctId!),
          await stored(oneWrite, event.distinctId!),
        ]
        expect(plain(inserted.properties), JSON.stringify(event)).to.deep.equal(plain(written.properties))
        expect(Object.keys(inserted.properties)).to.deep.equal(Object.keys(written.properties))
        expect(inserted.is_identified).to.equal(written.is_identified)
        expect(plain(after.person!.properties)).to.deep.equal(plain(before.person!.properties))
        expect(plain(after.properties)).to.deep.equal(plain(before.properties))
      }
    })

    it('leaves a new person at version 0, as PostHog creates it', async () => {
      const projectId = nextProjectId()
      await ingest(
        projectId,
        { distinctId: 'u', properties: { $set: { name: 'Ada' }, $browser: 'Firefox' } },
        hookedStore(),
      )
      const person = await stored(projectId, 'u')
      expect(person.version).to.equal(0)
      expect(plain(person.properties)).to.include({
        name: 'Ada',
        $browser: 'Firefox',
        $initial_browser: 'Firefox',
        $creator_event_uuid: personEvent().uuid,
      })
      await ingest(projectId, { distinctId: 'u', properties: { $set: { name: 'Grace' } } }, hookedStore())
      expect(await stored(projectId, 'u')).to.deep.include({ version: 1 })
    })
  })

  describe('the limit on keys per operation (1,000 by default)', () => {
    const keys = (n: number, prefix = 'k') =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]))

    it('applies the first 1,000 keys of each operation in the order sent, and warns once for the event', async () => {
      const projectId = nextProjectId()
      await ingest(projectId, { distinctId: 'u', properties: { $set: keys(10, 'old') } })
      const ctx = contextFor(projectId)
      const unset = [...Array.from({ length: 10 }, (_, i) => `old${i}`), ...Object.keys(keys(100_000, 'x'))]
      const resolved = await resolveEvent(
        t.store(),
        personEvent({
          distinctId: 'u',
          properties: { $set: keys(100_000), $set_once: keys(1_500, 'once'), $unset: unset },
        }),
        ctx,
        resolveOptions,
      )
      const event = (await updateEvent(t.store(), resolved, ctx, options))!
      const person = await stored(projectId, 'u')
      expect(Object.keys(person.properties).filter((key) => /^k\d+$/.test(key))).to.deep.equal(Object.keys(keys(1000)))
      expect(Object.keys(person.properties).filter((key) => key.startsWith('once'))).to.have.length(1000)
      expect(Object.keys(person.properties).filter((key) => key.startsWith('old'))).to.deep.equal([])
      expect(ctx.warnings).to.deep.equal([
        {
          type: 'person_update_keys_limit_reached',
          details: { set_keys: 100_000, set_once_keys: 1_500, unset_keys: 100_010, max_keys: 1000 },
        },
      ])
      // the stored event shows the $set that was applied, and keeps the properties as sent
      expect(Object.keys(event.person!.properties).filter((key) => /^k\d+$/.test(key))).to.have.length(1000)
      expect(Object.keys(event.properties.$set as object)).to.have.length(100_000)
    })

    it('applies an operation of exactly the limit whole, without a warning', async () => {
      const projectId = nextProjectId()
      const ctx = contextFor(projectId)
      const resolved = await resolveEvent(
        t.store(),
        personEvent({ distinctId: 'u', properties: { $set: keys(1000) } }),
        ctx,
        resolveOptions,
      )
      await updateEvent(t.store(), resolved, ctx, options)
      expect(Object.keys((await stored(projectId, 'u')).properties).filter((key) => /^k\d+$/.test(key))).to.have.length(
        1000,
      )
      expect(ctx.warnings).to.deep.equal([])
    })

    it('creates a person with the first 1,000 keys too', async () => {
      const created = creationProperties(
        personEvent({ distinctId: 'v', properties: { $set: keys(5000) } }),
        { $creator_event_uuid: 'e' },
        options,
      )
      expect(Object.keys(created)).to.have.length(1001)
    })
  })

  describe('the person properties size limit (655,360 bytes, PostHog)', () => {
    const big = (n: number) => 'x'.repeat(n * 1024)

    it('does not write a $set that would take the person past the limit: the person stays as it was, with a warning', async () => {
      const projectId = nextProjectId()
      await ingest(projectId, { distinctId: 'u', properties: { $set: { a: big(400) } } })
      const before = await stored(projectId, 'u')
      const ctx = contextFor(projectId)
      const resolved = await resolveEvent(
        t.store(),
        personEvent({ distinctId: 'u', properties: { $set: { b: big(300) } } }),
        ctx,
        resolveOptions,
      )
      const event = (await updateEvent(t.store(), resolved, ctx, options))!
      const after = await stored(projectId, 'u')
      expect(after.version).to.equal(before.version)
      expect(Object.keys(after.properties)).to.not.include('b')
      expect(ctx.warnings.map((w) => w.type)).to.deep.equal(['person_properties_size_violation'])
      expect(ctx.warnings[0]!.details).to.include({ personId: before.id, distinctId: 'u', eventUuid: resolved.uuid })
      // the event is kept, and shows what it set, as an event whose write was skipped does
      expect(event.person!.properties.b).to.have.length(300 * 1024)
      // a $set that fits still writes
      await ingest(projectId, { distinctId: 'u', properties: { $set: { c: 1 } } })
      expect((await stored(projectId, 'u')).properties.c).to.equal(1)
    })

    it('creates a person whose first $set is too large without it, and records the violation', async () => {
      const projectId = nextProjectId()
      const ctx = contextFor(projectId)
      const store = t.store()
      const resolved = await resolveEvent(
        store,
        personEvent({ distinctId: 'u', properties: { $set: { huge: big(700) } } }),
        ctx,
        resolveOptions,
      )
      await updateEvent(store, resolved, ctx, options)
      const person = await stored(projectId, 'u')
      expect(Object.keys(person.properties)).to.not.include('huge')
      expect(ctx.warnings.map((w) => w.type)).to.deep.equal(['person_properties_size_violation'])
      // the creation properties (the aliasResolve step inserts the person with them) leaves them out too
      expect(
        plain(
          creationProperties(
            personEvent({ distinctId: 'v', properties: { $set: { huge: big(700) } } }),
            { $creator_event_uuid: 'e' },
            options,
          ),
        ),
      ).to.deep.equal({ $creator_event_uuid: 'e' })
    })

    it("merges two persons whose properties together pass the limit keeping the survivor's own, with a warning", async () => {
      const projectId = nextProjectId()
      await ingest(projectId, { distinctId: 'anon', properties: { $set: { a: big(400) } } })
      await ingest(projectId, { distinctId: 'user', properties: { $set: { b: big(400), plan: 'pro' } } })
      const ctx = contextFor(projectId)
      await resolveEvent(
        t.store(),
        personEvent({ event: '$merge_dangerously', distinctId: 'user', properties: { alias: 'anon' } }),
        ctx,
        resolveOptions,
      )
      const anon = await stored(projectId, 'anon')
      const user = await stored(projectId, 'user')
      expect(anon.id).to.equal(user.id)
      expect(Object.keys(user.properties)).to.include.members(['b', 'plan']).and.not.include('a')
      expect(ctx.warnings.map((w) => w.type)).to.deep.equal(['person_properties_size_violation'])
    })
  })
})
