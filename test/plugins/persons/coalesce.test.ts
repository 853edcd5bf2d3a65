import { expect } from 'chai'
import type { CommandStartedEvent, Db, MongoClient } from 'mongodb'
import { Coalescer } from '../../../core/model/coalesce.ts'
import { PersonStore, ensurePersonIndexes } from '../../../plugins/persons/person-store.ts'
import { resolveEvent } from '../../../plugins/persons/resolve.ts'
import { personUuid } from '../../../plugins/persons/person-uuid.ts'
import { monitoredClient, testDbName } from '../../helpers/mongo.ts'
import { contextFor, nextProjectId, personEvent } from './fixtures.ts'
import { batching } from '../../../core/model/batching.ts'

const OPTIONS = { forceUpgrade: true, forceUpgradeAfterMs: 60_000 }

describe('Coalescer', () => {
  it('answers many calls made together with one load, each with its own value', async () => {
    const loads: string[][] = []
    const coalescer = new Coalescer<string, number>(
      (key) => key,
      async (keys) => {
        loads.push(keys)
        return new Map(keys.filter((key) => key !== 'missing').map((key) => [key, key.length]))
      },
    )
    const values = await Promise.all(['a', 'bb', 'a', 'missing', 'cccc'].map((key) => coalescer.get(key)))
    expect(values).to.deep.equal([1, 2, 1, undefined, 4])
    expect(loads).to.deep.equal([['a', 'bb', 'missing', 'cccc']])
  })

  it('never answers a call with a load that started before the call was made', async () => {
    let stored = 1
    const coalescer = new Coalescer<string, number>(
      (key) => key,
      async () => {
        const value = stored
        await new Promise((resolve) => setTimeout(resolve, 20))
        return new Map([['k', value]])
      },
    )
    const first = coalescer.get('k')
    await new Promise((resolve) => setImmediate(resolve)) // the first load is now under way
    stored = 2
    expect(await Promise.all([first, coalescer.get('k')])).to.deep.equal([1, 2])
  })

  it('rejects every caller of a failed load, and the next load runs afresh', async () => {
    let fail = true
    const coalescer = new Coalescer<string, number>(
      (key) => key,
      async (keys) => {
        if (fail) throw new Error('database unavailable')
        return new Map(keys.map((key) => [key, 1]))
      },
    )
    const results = await Promise.allSettled([coalescer.get('a'), coalescer.get('b')])
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected'])
    fail = false
    expect(await coalescer.get('a')).to.equal(1)
  })
  describe('with spacingMs', () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const spaced = (spacingMs: number) => {
      const loads: { keys: string[]; at: number }[] = []
      const coalescer = new Coalescer<string, string>(
        (key) => key,
        async (keys) => {
          loads.push({ keys, at: performance.now() })
          return new Map(keys.map((key) => [key, key.toUpperCase()]))
        },
        { spacingMs },
      )
      return { coalescer, loads }
    }

    it('sends calls spread over the window after a load as one load, each with its own value', async () => {
      const { coalescer, loads } = spaced(600)
      const answers = [coalescer.get('a')]
      await new Promise((resolve) => setImmediate(resolve))
      expect(loads.map((l) => l.keys)).to.deep.equal([['a']]) // the first call after a quiet spell goes at once
      for (const key of ['b', 'c', 'd']) {
        await sleep(20)
        answers.push(coalescer.get(key))
      }
      expect(await Promise.all(answers)).to.deep.equal(['A', 'B', 'C', 'D'])
      expect(loads.map((l) => l.keys)).to.deep.equal([['a'], ['b', 'c', 'd']])
      // timers may fire a little early on some platforms' clocks: a margin of 5 ms
      expect(loads[1]!.at - loads[0]!.at).to.be.at.least(595)
    })

    it('sends a call made after a quiet spell on the next turn, without waiting', async () => {
      const { coalescer, loads } = spaced(200)
      await coalescer.get('a')
      await sleep(250)
      const answer = coalescer.get('b')
      await new Promise((resolve) => setImmediate(resolve))
      expect(loads.map((l) => l.keys)).to.deep.equal([['a'], ['b']])
      expect(await answer).to.equal('B')
    })

    it('sends a call made right after a load of several keys on the next turn: a burst shares loads without waiting', async () => {
      const { coalescer, loads } = spaced(600)
      await Promise.all([coalescer.get('a'), coalescer.get('b')])
      const answer = coalescer.get('c')
      await new Promise((resolve) => setImmediate(resolve))
      expect(loads.map((l) => l.keys)).to.deep.equal([['a', 'b'], ['c']])
      expect(await answer).to.equal('C')
    })

    it('never answers a call with a load that started before the call was made', async () => {
      let stored = 1
      const coalescer = new Coalescer<string, number>(
        (key) => key,
        async () => new Map([['k', stored]]),
        { spacingMs: 100 },
      )
      expect(await coalescer.get('k')).to.equal(1)
      stored = 2
      expect(await coalescer.get('k')).to.equal(2)
    })
  })
})

describe('PersonStore batched lookups', () => {
  let client: MongoClient
  let db: Db
  const commands: CommandStartedEvent[] = []
  before(async () => {
    client = await monitoredClient((event) => commands.push(event))
    db = client.db(testDbName('coalesce'))
    await ensurePersonIndexes(db)
  })
  after(async () => {
    await db.dropDatabase().catch(() => undefined)
    await client.close()
  })
  beforeEach(() => {
    commands.length = 0
  })
  const countOf = (name: string, collection: string) =>
    commands.filter((c) => c.commandName === name && c.command[name] === collection).length

  it('resolves 100 personless events of 100 new ids with one lookup and one bookkeeping write', async () => {
    const projectId = nextProjectId()
    const store = new PersonStore(db, batching)
    const ctx = contextFor(projectId)
    const events = Array.from({ length: 100 }, (_, i) => personEvent({ distinctId: `anon-${i}`, personless: true }))
    const resolved = await Promise.all(events.map((event) => resolveEvent(store, event, ctx, OPTIONS)))
    expect(resolved.map((event) => event.person?.id)).to.deep.equal(
      events.map((event) => personUuid(projectId, event.distinctId)),
    )
    expect(countOf('find', 'person_distinct_ids')).to.equal(1)
    expect(countOf('update', 'personless_distinct_ids')).to.equal(1)
    expect(await db.collection('personless_distinct_ids').countDocuments({ project_id: projectId })).to.equal(100)
  })

  it('creates the persons of 100 new ids with one insert per collection, one person each', async () => {
    const projectId = nextProjectId()
    const store = new PersonStore(db, batching)
    const ctx = contextFor(projectId)
    const events = Array.from({ length: 100 }, (_, i) => personEvent({ distinctId: `new-${i}` }))
    const resolved = await Promise.all(events.map((event) => resolveEvent(store, event, ctx, OPTIONS)))
    expect(resolved.map((event) => event.person?.id)).to.deep.equal(
      events.map((event) => personUuid(projectId, event.distinctId)),
    )
    expect(countOf('insert', 'person_distinct_ids')).to.equal(1)
    expect(countOf('insert', 'persons')).to.equal(1)
    expect(countOf('find', 'person_distinct_ids')).to.equal(1)
    expect(await db.collection('persons').countDocuments({ project_id: projectId })).to.equal(100)
  })

  it('maps an id to one person when two creators in one batch race for it', async () => {
    const projectId = nextProjectId()
    const store = new PersonStore(db, batching)
    const [a, b] = await Promise.all([
      store.addDistinctId(projectId, 'person-a', 'shared'),
      store.addDistinctId(projectId, 'person-b', 'shared'),
    ])
    expect([a, b]).to.deep.equal([true, false])
    expect(countOf('insert', 'person_distinct_ids')).to.equal(1)
    expect(
      await db
        .collection('person_distinct_ids')
        .find({ project_id: projectId }, { projection: { _id: 0, person_id: 1 } })
        .toArray(),
    ).to.deep.equal([{ person_id: 'person-a' }])
  })

  it('writes 100 persons in one bulk command, and refuses a stale version batched with a fresh one', async () => {
    const projectId = nextProjectId()
    const store = new PersonStore(db, batching)
    const ctx = contextFor(projectId)
    const created = await Promise.all(
      Array.from({ length: 100 }, (_, i) => resolveEvent(store, personEvent({ distinctId: `w-${i}` }), ctx, OPTIONS)),
    )
    const people = created.map((event) => store.resolved.get(event)!.person)
    commands.length = 0
    const written = await Promise.all(people.map((person, i) => store.writePerson(person, { properties: { n: i } })))
    expect(written.every((person) => person !== null)).to.equal(true)
    expect(countOf('update', 'persons')).to.equal(1)
    const [fresh, stale] = await Promise.all([
      store.writePerson(written[0]!, { properties: { n: 'fresh' } }),
      store.writePerson(people[0]!, { properties: { n: 'stale' } }),
    ])
    expect(stale).to.equal(null)
    expect(fresh === null || fresh.properties.n === 'fresh').to.equal(true) // a batch with a conflict reports every write as one
    const stored = await store.findById(projectId, people[0]!.id)
    expect(stored).to.deep.include({ version: 2 })
    expect(stored!.properties).to.deep.equal({ n: 'fresh' })
  })

  it('resolves 100 events of 100 existing persons with one lookup per collection, each to its own person', async () => {
    const projectId = nextProjectId()
    const ctx = contextFor(projectId)
    const events = Array.from({ length: 100 }, (_, i) => personEvent({ distinctId: `user-${i}` }))
    const created = await Promise.all(
      events.map((event) => resolveEvent(new PersonStore(db, batching), event, ctx, OPTIONS)),
    )
    commands.length = 0
    const store = new PersonStore(db, batching)
    // a later request: its own context (the first pass's sequence would answer from memory)
    const again = await Promise.all(events.map((event) => resolveEvent(store, event, contextFor(projectId), OPTIONS)))
    expect(again.map((event) => event.person?.id)).to.deep.equal(created.map((event) => event.person?.id))
    expect(new Set(again.map((event) => event.person?.id)).size).to.equal(100)
    expect(countOf('find', 'person_distinct_ids')).to.equal(1)
    expect(countOf('find', 'persons')).to.equal(1)
  })
})
