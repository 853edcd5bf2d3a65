import { expect } from 'chai'
import { MongoClient } from 'mongodb'
import { pino } from 'pino'
import { DefinitionsCache } from '../../../plugins/decide/cache.ts'
import { readDefinitions } from '../../../plugins/decide/definitions/import.ts'
import { DefinitionsReader } from '../../../plugins/decide/store/definitions.ts'
import { GroupStore } from '../../../core/model/groups.ts'
import { DefinitionEdits } from '../../../plugins/decide/store/edits.ts'
import { Generations } from '../../../plugins/decide/store/generations.ts'
import { replaceDefinitions } from '../../../plugins/decide/store/replace.ts'
import { testMongoUrl } from '../../helpers/mongo.ts'
import { openTestDb } from './store/db.ts'
import type { TestDb } from './store/db.ts'

const logger = pino({ level: 'silent' })
const flag = (id: number, key: string) => ({
  id,
  key,
  active: true,
  filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
})

/** Polls `check` every 10 ms until it holds; fails after `ms`. */
async function eventually(check: () => boolean | Promise<boolean>, ms: number): Promise<number> {
  const started = Date.now()
  while (Date.now() - started < ms) {
    if (await check()) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`not true within ${ms} ms`)
}

describe('decide DefinitionsCache', () => {
  let t: TestDb
  let other: MongoClient
  let project = 600
  const caches: DefinitionsCache[] = []
  const cacheOn = (db = t.db, pollIntervalMs = 50, maxProjects = 100) => {
    const cache = new DefinitionsCache(
      new DefinitionsReader(db, new GroupStore(db)),
      new Generations(db),
      { pollIntervalMs, maxProjects },
      logger,
    )
    caches.push(cache)
    return cache
  }

  before(async () => {
    t = await openTestDb('decide_cache')
    other = await new MongoClient(await testMongoUrl()).connect()
  })
  after(async () => {
    caches.forEach((cache) => cache.stop())
    await other.close()
    await t.close()
  })
  beforeEach(() => void project++)

  it('logs what the flags compiled to when printCompiledFlags is set', async () => {
    await replaceDefinitions(t.db, project, readDefinitions({ flags: [flag(1, 'listed')] }))
    const lines: Array<Record<string, unknown>> = []
    const capture = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    )
    const cache = new DefinitionsCache(
      new DefinitionsReader(t.db, new GroupStore(t.db)),
      new Generations(t.db),
      { pollIntervalMs: 50, maxProjects: 10, printCompiledFlags: true },
      capture,
    )
    await cache.get(project)
    const logged = lines.find((line) => line.msg === 'flags: compiled definitions')
    expect(logged?.project).to.equal(project)
    expect(logged?.compiled).to.include('listed (id 1)').and.include('rollout 100% (no hash)')
  })

  it('serves a change made by another process within a poll interval', async () => {
    await replaceDefinitions(t.db, project, readDefinitions({ flags: [flag(1, 'before')] }))
    const cache = cacheOn()
    cache.start()
    expect((await cache.get(project)).flags.map((f) => f.key)).to.deep.equal(['before'])
    const elsewhere = other.db(t.db.databaseName)
    await replaceDefinitions(elsewhere, project, readDefinitions({ flags: [flag(1, 'after')] }))
    const waited = await eventually(async () => (await cache.get(project)).flags[0]?.key === 'after', 2000)
    expect(waited).to.be.below(1000)
    await DefinitionEdits.flags(elsewhere).update(project, 1, (doc) => ({ ...doc, active: false }))
    await eventually(async () => (await cache.get(project)).flags[0]?.active === false, 2000)
  })

  it('notices a new group type written by ingestion, which does not bump the version', async () => {
    const cache = cacheOn()
    cache.start()
    expect((await cache.get(project)).groupTypeMapping).to.deep.equal({})
    await t.db
      .collection('group_type_mappings')
      .insertOne({ project_id: project, group_type: 'company', group_type_index: 0, created_at: new Date() })
    await eventually(async () => (await cache.get(project)).groupTypeMapping['0'] === 'company', 2000)
  })

  it('shares one read between concurrent first requests and keeps the newest version', async () => {
    await replaceDefinitions(t.db, project, readDefinitions({ flags: [flag(1, 'a')] }))
    const cache = cacheOn(t.db, 60_000)
    const [first, second] = await Promise.all([cache.get(project), cache.get(project)])
    expect(first).to.equal(second)
    await replaceDefinitions(t.db, project, readDefinitions({ flags: [flag(1, 'b')] }))
    const reloaded = await cache.reload(project)
    expect(reloaded.flags[0].key).to.equal('b')
    expect(await cache.get(project)).to.equal(reloaded)
  })

  it('keeps at most maxProjects projects, dropping the oldest', async () => {
    const cache = cacheOn(t.db, 60_000, 2)
    const a = await cache.get(project)
    await cache.get(project + 1000)
    await cache.get(project + 2000)
    expect(await cache.get(project)).to.not.equal(a)
  })

  it('memoises the SDK body and its ETag per version', async () => {
    await replaceDefinitions(t.db, project, readDefinitions({ flags: [flag(1, 'a')] }))
    const cache = cacheOn(t.db, 60_000)
    const definitions = await cache.get(project)
    expect(definitions.sdkBody()).to.equal(definitions.sdkBody())
    expect(definitions.sdkBody().etag).to.match(/^W\/"[0-9a-f]{40}"$/)
    await replaceDefinitions(t.db, project, readDefinitions({ flags: [flag(1, 'b')] }))
    expect((await cache.reload(project)).sdkBody().etag).to.not.equal(definitions.sdkBody().etag)
  })
})
