import { expect } from 'chai'
import type { CommandStartedEvent, MongoClient } from 'mongodb'
import { GroupStore } from '../../../core/model/groups.ts'
import { GROUP_COLLECTIONS } from '../../../core/plugin-api.ts'
import { monitoredClient, testDbName } from '../../helpers/mongo.ts'

const group = (projectId: number, typeIndex: number, key: string, properties: Record<string, unknown>) => ({
  project_id: projectId,
  group_type_index: typeIndex,
  group_key: key,
  group_properties: properties,
  created_at: new Date(0),
  version: 1,
})

describe('GroupStore (the groups service)', () => {
  let client: MongoClient
  const finds: Array<Record<string, unknown>> = []
  before(async () => {
    client = await monitoredClient(
      (event: CommandStartedEvent) =>
        event.commandName === 'find' && finds.push(event.command.filter as Record<string, unknown>),
    )
  })
  after(() => client.close())

  it('answers concurrent reads from one find per project and group type, each with its own group', async () => {
    const db = client.db(testDbName('group-reader'))
    await db
      .collection(GROUP_COLLECTIONS.groups)
      .insertMany([
        ...Array.from({ length: 10 }, (_, i) => group(7, 0, `company-${i}`, { n: i })),
        group(7, 1, 'company-1', { other: 'type' }),
        group(8, 0, 'company-1', { other: 'project' }),
      ])
    const reader = new GroupStore(db)
    finds.length = 0
    const keys = [...Array.from({ length: 10 }, (_, i) => `company-${i}`), 'company-1', 'unknown']
    const answers = await Promise.all([
      ...keys.map((key) => reader.properties(7, 0, key)),
      reader.properties(7, 1, 'company-1'),
      reader.properties(8, 0, 'company-1'),
    ])
    expect(answers.slice(0, 10).map((p) => p?.n)).to.deep.equal(Array.from({ length: 10 }, (_, i) => i))
    expect(answers[10]).to.deep.equal({ n: 1 })
    expect(answers[11]).to.equal(undefined)
    expect(answers[12]).to.deep.equal({ other: 'type' })
    expect(answers[13]).to.deep.equal({ other: 'project' })
    expect(finds).to.have.length(3)
    await db.dropDatabase()
  })

  it('sends evenly spaced reads made within the read spacing as one find, each answered with its own group', async () => {
    const db = client.db(testDbName('group-reader'))
    await db
      .collection(GROUP_COLLECTIONS.groups)
      .insertMany(Array.from({ length: 5 }, (_, i) => group(1, 0, `spaced-${i}`, { n: i })))
    // the test's spacing is wide so that a loaded machine's late timers stay inside it
    const reader = new GroupStore(db, { spacingMs: 800 })
    finds.length = 0
    const answers: Promise<unknown>[] = []
    for (let i = 0; i < 5; i++) {
      answers.push(reader.properties(1, 0, `spaced-${i}`).then((p) => p?.n))
      await new Promise((resolve) => setTimeout(resolve, 15))
    }
    expect(await Promise.all(answers)).to.deep.equal([0, 1, 2, 3, 4])
    // the first goes at once, the four that follow it share the next find
    expect(finds.map((filter) => (filter.group_key as { $in: string[] }).$in)).to.deep.equal([
      ['spaced-0'],
      ['spaced-1', 'spaced-2', 'spaced-3', 'spaced-4'],
    ])
    await db.dropDatabase()
  })

  it('sees a write completed before the call (no cached answers)', async () => {
    const db = client.db(testDbName('group-reader'))
    const reader = new GroupStore(db)
    await db.collection(GROUP_COLLECTIONS.groups).insertOne(group(1, 0, 'acme', { plan: 'free' }))
    expect(await reader.properties(1, 0, 'acme')).to.deep.equal({ plan: 'free' })
    await db
      .collection(GROUP_COLLECTIONS.groups)
      .updateOne({ project_id: 1, group_key: 'acme' }, { $set: { group_properties: { plan: 'pro' } } })
    expect(await reader.properties(1, 0, 'acme')).to.deep.equal({ plan: 'pro' })
    await db.dropDatabase()
  })

  it("reads a project's group types by index, and those of several projects in one find", async () => {
    const db = client.db(testDbName('group-reader'))
    const reader = new GroupStore(db)
    const type = (projectId: number, index: number, name: string) => ({
      project_id: projectId,
      group_type: name,
      group_type_index: index,
      created_at: new Date(0),
    })
    await db
      .collection(GROUP_COLLECTIONS.groupTypeMappings)
      .insertMany([type(3, 2, 'team'), type(3, 0, 'company'), type(4, 0, 'org')])
    expect(Object.entries(await reader.typeMapping(3))).to.deep.equal([
      ['0', 'company'],
      ['2', 'team'],
    ])
    expect(await reader.typeMapping(5)).to.deep.equal({})
    finds.length = 0
    const all = await reader.typeMappings([3, 4, 5])
    expect(finds).to.have.length(1)
    expect([...all]).to.deep.equal([
      [3, { 0: 'company', 2: 'team' }],
      [4, { 0: 'org' }],
      [5, {}],
    ])
    await db.dropDatabase()
  })
})
