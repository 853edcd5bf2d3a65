import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import { processGroups } from '../../../plugins/group-update/step.ts'
import type { GroupStepDeps } from '../../../plugins/group-update/step.ts'
import { GroupTypeMappings } from '../../../plugins/group-update/type-mapping.ts'
import { WarnOnce } from '../../../plugins/group-update/warn-once.ts'
import { GROUP_COLLECTIONS } from '../../../core/plugin-api.ts'
import { ensureCoreIndexes } from '../../../core/model/collections.ts'
import type { EventContext, IngestEvent } from '../../../core/plugin-api.ts'
import { sampleContext } from '../../helpers/hooks.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'

describe('group-update step', () => {
  let client: MongoClient
  let db: Db
  let deps: GroupStepDeps
  /** What the step told the groups reader it wrote. */
  let changed: Array<[number, number, string]>
  let projectId = 100

  before(async () => {
    client = await new MongoClient(await testMongoUrl()).connect()
    db = client.db(testDbName('group_step'))
    await ensureCoreIndexes(db)
  })
  after(async () => {
    await db.dropDatabase()
    await client.close()
  })
  beforeEach(() => {
    projectId++
    changed = []
    deps = {
      db,
      groups: { changed: (...group) => void changed.push(group) },
      mappings: new GroupTypeMappings(db),
      limitWarnings: new WarnOnce(60_000),
    }
  })

  const event = (name: string, properties: Record<string, unknown>, over: Partial<IngestEvent> = {}): IngestEvent => ({
    uuid: '',
    event: name,
    distinctId: 'd',
    properties,
    timestamp: new Date('2026-03-01T00:00:00Z'),
    ...over,
  })
  function context(): EventContext & { warnings: Array<{ type: string; details?: Record<string, unknown> }> } {
    const warnings: Array<{ type: string; details?: Record<string, unknown> }> = []
    return {
      ...sampleContext(),
      project: { ...sampleContext().project, id: projectId },
      warn: (type, details) => void warnings.push({ type, details }),
      warnings,
    }
  }
  const groups = () =>
    db
      .collection(GROUP_COLLECTIONS.groups)
      .find({ project_id: projectId }, { projection: { _id: 0, group_key: 1, group_properties: 1 } })
      .toArray()

  it('writes the group of a $groupidentify and attaches the event to its $groups', async () => {
    const result = await processGroups(
      event('$groupidentify', {
        $group_type: 'company',
        $group_key: 'acme',
        $group_set: { name: 'Acme' },
        $groups: { company: 'acme' },
      }),
      context(),
      deps,
    )
    expect(result?.properties).to.include({ $group_0: 'acme' })
    expect(await groups()).to.deep.equal([{ group_key: 'acme', group_properties: { name: 'Acme' } }])
    expect(changed, 'the reader is told, so that flags read the group at once').to.deep.equal([[projectId, 0, 'acme']])
  })

  it('leaves an event without $groups unchanged', async () => {
    expect(await processGroups(event('pageview', { a: 1 }), context(), deps)).to.equal(undefined)
  })

  it('removes $group_N from personless events and touches nothing in the database', async () => {
    const result = await processGroups(
      event('pageview', { $groups: { company: 'acme' }, $group_0: 'forged' }, { personless: true }),
      context(),
      deps,
    )
    expect(result?.properties).to.deep.equal({ $groups: { company: 'acme' } })
    expect(await deps.mappings.load(projectId)).to.have.property('size', 0)
  })

  it('warns about an invalid $group_set, writes no group, and keeps the event', async () => {
    const ctx = context()
    const result = await processGroups(
      event('$groupidentify', {
        $group_type: 'company',
        $group_key: 'acme',
        $group_set: 'oops',
        $groups: { company: 'acme' },
      }),
      ctx,
      deps,
    )
    expect(ctx.warnings.map((w) => w.type)).to.deep.equal(['invalid_group_set'])
    expect(result?.properties.$group_0).to.equal('acme')
    expect(await groups()).to.deep.equal([])
  })

  it('warns about a sixth type once per window, however many events carry it', async () => {
    const ctx = context()
    for (const type of ['a', 'b', 'c', 'd', 'e'])
      await processGroups(event('e', { $groups: { [type]: 'k' } }), ctx, deps)
    const results = []
    for (let i = 0; i < 3; i++)
      results.push(await processGroups(event('e', { $groups: { a: 'k', sixth: 'k' } }), ctx, deps))
    expect(results.map((r) => r?.properties)).to.deep.equal(
      Array(3).fill({ $groups: { a: 'k', sixth: 'k' }, $group_0: 'k' }),
    )
    expect(ctx.warnings).to.deep.equal([
      {
        type: 'group_type_limit_reached',
        details: { group_type: 'sixth', group_types: ['sixth'], refused_count: 1, max_group_types: 5 },
      },
    ])
  })

  it('records one warning for an event with 2,000 types, with the count of refused types, and attaches the first five', async () => {
    const ctx = context()
    const types = Array.from({ length: 2000 }, (_, i) => `type_${i}`)
    const result = await processGroups(
      event('e', { $groups: Object.fromEntries(types.map((type) => [type, 'k'])) }),
      ctx,
      deps,
    )
    expect(Object.keys(result!.properties).filter((key) => key.startsWith('$group_'))).to.deep.equal([
      '$group_0',
      '$group_1',
      '$group_2',
      '$group_3',
      '$group_4',
    ])
    expect(ctx.warnings).to.deep.equal([
      {
        type: 'group_type_limit_reached',
        details: { group_type: 'type_5', group_types: types.slice(5, 15), refused_count: 1995, max_group_types: 5 },
      },
    ])
    expect(await db.collection(GROUP_COLLECTIONS.groupTypeMappings).countDocuments({ project_id: projectId })).to.equal(
      5,
    )
  })

  it('warns again when an event names a refused type not warned about in the window, and cuts long names', async () => {
    const ctx = context()
    await processGroups(event('e', { $groups: { a: 'k', b: 'k', c: 'k', d: 'k', e: 'k', f: 'k' } }), ctx, deps)
    const long = 'x'.repeat(5000)
    await processGroups(event('e', { $groups: { f: 'k', [long]: 'k' } }), ctx, deps)
    await processGroups(event('e', { $groups: { f: 'k', [long]: 'k' } }), ctx, deps)
    expect(ctx.warnings.map((w) => w.details?.group_types)).to.deep.equal([['f'], ['f', 'x'.repeat(200)]])
  })

  it('counts a refused $groupidentify type in the same single warning, without writing its group', async () => {
    const ctx = context()
    await processGroups(event('e', { $groups: { a: 'k', b: 'k', c: 'k', d: 'k', e: 'k' } }), ctx, deps)
    await processGroups(
      event('$groupidentify', { $group_type: 'sixth', $group_key: 'acme', $groups: { sixth: 'acme', seventh: 'x' } }),
      ctx,
      deps,
    )
    expect(ctx.warnings.map((w) => w.details)).to.deep.equal([
      { group_type: 'sixth', group_types: ['sixth', 'seventh'], refused_count: 2, max_group_types: 5 },
    ])
    expect(await groups()).to.deep.equal([])
  })
})
