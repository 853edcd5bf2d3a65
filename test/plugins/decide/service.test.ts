import { expect } from 'chai'
import net from 'node:net'
import { MongoClient } from 'mongodb'
import { pino } from 'pino'
import type { Project } from '../../../core/plugin-api.ts'
import { DefinitionsCache } from '../../../plugins/decide/cache.ts'
import { readDefinitions } from '../../../plugins/decide/definitions/import.ts'
import { hashFor } from '../../../plugins/decide/evaluator/index.ts'
import { FlagsEvaluation } from '../../../plugins/decide/service.ts'
import { DefinitionsReader } from '../../../plugins/decide/store/definitions.ts'
import { GroupStore } from '../../../core/model/groups.ts'
import { Generations } from '../../../plugins/decide/store/generations.ts'
import { CohortMembers } from '../../../plugins/decide/store/members.ts'
import { replaceDefinitions } from '../../../plugins/decide/store/replace.ts'
import { openGeoip } from '../../../plugins/geoip/lookup.ts'
import { PersonsReader } from '../../../plugins/persons/persons-reader.ts'
import type { GeoipReader } from '../../../plugins/geoip/lookup.ts'
import { testMongoUrl } from '../../helpers/mongo.ts'
import { withDeadline } from '../../../core/deadlines.ts'
import { writeMaxMindCityFixture } from '../geoip/fixtures.ts'
import { insertPerson, openTestDb } from './store/db.ts'
import type { TestDb } from './store/db.ts'
import { batching } from '../../../core/model/batching.ts'

const logger = pino({ level: 'silent' })
const project: Project = { id: 500, name: 'p', apiToken: 'phc_x', secretApiToken: 'phs_x', timezone: 'UTC' }
const cond = (properties: unknown[], rollout = 100) => ({ groups: [{ properties, rollout_percentage: rollout }] })
const CONTINUITY_ROLLOUT = 50

const DEFINITIONS = {
  flags: [
    { id: 1, key: 'rollout', active: true, filters: cond([]) },
    {
      id: 2,
      key: 'plan-pro',
      active: true,
      filters: {
        ...cond([{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }]),
        payloads: { true: '"pro!"' },
      },
    },
    { id: 3, key: 'corp-cohort', active: true, filters: cond([{ key: 'id', value: 5, type: 'cohort' }]) },
    { id: 4, key: 'static-cohort', active: true, filters: cond([{ key: 'id', value: 6, type: 'cohort' }]) },
    {
      id: 5,
      key: 'big-company',
      active: true,
      filters: {
        aggregation_group_type_index: 0,
        ...cond([{ key: 'seats', value: 3, type: 'group', group_type_index: 0, operator: 'gt' }]),
      },
    },
    {
      id: 6,
      key: 'continuity',
      active: true,
      ensure_experience_continuity: true,
      filters: cond([], CONTINUITY_ROLLOUT),
    },
    {
      id: 7,
      key: 'british',
      active: true,
      filters: cond([{ key: '$geoip_country_code', value: 'GB', type: 'person' }]),
    },
  ],
  group_type_mapping: { 0: 'company' },
  cohorts: {
    5: {
      type: 'OR',
      values: [
        { type: 'AND', values: [{ key: 'email', value: '@corp.example', type: 'person', operator: 'icontains' }] },
      ],
    },
    6: { name: 'beta testers', is_static: true },
  },
}

describe('decide flags service', () => {
  let t: TestDb
  let geoip: GeoipReader
  const cacheOf = (db = t.db) =>
    new DefinitionsCache(
      new DefinitionsReader(db, new GroupStore(db)),
      new Generations(db),
      { pollIntervalMs: 1000, maxProjects: 10 },
      logger,
    )
  const service = (db = t.db, cache = cacheOf()) =>
    new FlagsEvaluation({
      db,
      groups: new GroupStore(db),
      persons: new PersonsReader(db, batching),
      cache,
      geoip,
      databaseTimeoutMs: 2000,
      withDeadline,
      regexBudgetMs: 100,
      logger,
    })

  before(async () => {
    t = await openTestDb('decide_service')
    geoip = await openGeoip({ databasePath: writeMaxMindCityFixture() })
    await replaceDefinitions(t.db, project.id, readDefinitions(DEFINITIONS))
    await insertPerson(t.db, project.id, 'alice', ['alice', 'alice-anon'], { plan: 'pro', email: 'alice@corp.example' })
    await insertPerson(t.db, project.id, 'bob', ['bob'], { plan: 'free', email: 'bob@home.example' })
    await new CohortMembers(t.db).add(project.id, 6, ['alice-anon'])
    await t.db.collection('groups').insertOne({
      project_id: project.id,
      group_type_index: 0,
      group_key: 'acme',
      group_properties: { seats: 10 },
      created_at: new Date(),
      version: 1,
    })
  })
  after(async () => {
    geoip.close()
    await t.close()
  })

  const values = async (
    request: Parameters<FlagsEvaluation['evaluateValues']>[2] & { distinctId: string },
    svc = service(),
  ) => {
    const { distinctId, ...rest } = request
    return { ...(await svc.evaluateValues(project, distinctId, rest)) }
  }

  it('matches stored person properties, dynamic and static cohorts, and stored group properties', async () => {
    expect(await values({ distinctId: 'alice', groups: { company: 'acme' } })).to.include({
      rollout: true,
      'plan-pro': true,
      'corp-cohort': true,
      'static-cohort': true,
      'big-company': true,
    })
    expect(await values({ distinctId: 'bob', groups: { company: 'other' } })).to.include({
      rollout: true,
      'plan-pro': false,
      'corp-cohort': false,
      'static-cohort': false,
      'big-company': false,
    })
  })

  it('merges request overrides over the stored properties, the override winning', async () => {
    expect(
      await values({
        distinctId: 'bob',
        personProperties: { plan: 'pro' },
        groups: { company: 'other' },
        groupProperties: { company: { seats: 4 } },
      }),
    ).to.include({ 'plan-pro': true, 'big-company': true })
    expect(await values({ distinctId: 'alice', personProperties: { plan: 'free' } })).to.include({ 'plan-pro': false })
  })

  it('computes the $geoip_* person properties from the client IP', async () => {
    expect(await values({ distinctId: 'bob', ip: '81.2.69.142' })).to.include({ british: true })
    expect(await values({ distinctId: 'bob', ip: '10.0.0.1' })).to.include({ british: false })
  })

  it('fails only the flags that need the database when it cannot be read (flags.md §11)', async () => {
    const closed = await new MongoClient(await testMongoUrl()).connect()
    await closed.close()
    const broken = service(closed.db(t.db.databaseName), cacheOf())
    const result = await broken.evaluate(project, {
      distinctId: 'alice',
      personProperties: { email: 'x' },
      ip: '81.2.69.142',
    })
    expect(result.errorsWhileComputingFlags).to.equal(true)
    expect(result.flags.rollout).to.include({ enabled: true, failed: false })
    expect(result.flags.british, 'all its properties are in the overrides').to.include({ enabled: true, failed: false })
    expect(result.flags['plan-pro']).to.deep.include({
      enabled: false,
      failed: true,
      reason: {
        code: 'database_error',
        condition_index: null,
        description: 'Database connection error during evaluation',
      },
    })
    expect(result.flags['corp-cohort'].failed).to.equal(true)
    const withOverride = await broken.evaluate(project, {
      distinctId: 'alice',
      personProperties: { plan: 'pro' },
      flagKeys: ['plan-pro'],
    })
    expect(withOverride.flags['plan-pro']).to.include({ enabled: true, failed: false })
    expect(withOverride.errorsWhileComputingFlags).to.equal(false)
    const continuity = await broken.evaluate(project, {
      distinctId: 'alice',
      anonDistinctId: 'alice-anon',
      flagKeys: ['continuity'],
    })
    expect(continuity.flags.continuity.reason.code).to.equal('hash_key_override_error')
    expect(await broken.evaluateValues(project, 'alice', { flagKeys: ['plan-pro'] })).to.not.have.property('plan-pro')
  })

  it('fails the flags that need the database with reason timeout when it does not answer in time', async () => {
    const silent = net.createServer((socket) => void socket) // accepts connections and never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const { port } = silent.address() as net.AddressInfo
    const hung = new MongoClient(`mongodb://127.0.0.1:${port}/?directConnection=true`, {
      serverSelectionTimeoutMS: 3000,
    })
    try {
      const svc = new FlagsEvaluation({
        db: hung.db('x'),
        groups: new GroupStore(hung.db('x')),
        persons: new PersonsReader(hung.db('x'), batching),
        cache: cacheOf(),
        geoip,
        databaseTimeoutMs: 100,
        withDeadline,
        regexBudgetMs: 100,
        logger,
      })
      const started = Date.now()
      const result = await svc.evaluate(project, { distinctId: 'alice', flagKeys: ['plan-pro', 'rollout'] })
      expect(Date.now() - started).to.be.below(1000)
      expect(result.flags['plan-pro']).to.deep.include({
        failed: true,
        reason: { code: 'timeout', condition_index: null, description: 'Timeout while reading person and group data' },
      })
      expect(result.flags.rollout.enabled).to.equal(true)
    } finally {
      await hung.close(true)
      silent.close()
    }
  })

  it('keeps a person in the bucket of its anonymous id through the stored hash key override', async () => {
    const inRollout = (id: string) => hashFor('continuity', id) <= CONTINUITY_ROLLOUT / 100
    const anon = 'visitor-0'
    let user = 'member-0'
    for (let i = 1; i < 100 && inRollout(user) === inRollout(anon); i++) user = `member-${i}`
    expect(inRollout(user)).to.not.equal(inRollout(anon))
    await insertPerson(t.db, project.id, 'carol', [user, anon])
    const svc = service()
    expect((await values({ distinctId: anon, flagKeys: ['continuity'] }, svc)).continuity).to.equal(inRollout(anon))
    expect(
      (await values({ distinctId: user, anonDistinctId: anon, flagKeys: ['continuity'] }, svc)).continuity,
    ).to.equal(inRollout(anon))
    expect(
      (await values({ distinctId: user, flagKeys: ['continuity'] }, svc)).continuity,
      'later, without the anon id',
    ).to.equal(inRollout(anon))
  })

  it('sees a definitions change made through another cache once that cache reloads, and this one after refresh', async () => {
    const svc = service()
    expect(await values({ distinctId: 'bob' }, svc)).to.include({ rollout: true })
    await replaceDefinitions(
      t.db,
      project.id,
      readDefinitions({
        ...DEFINITIONS,
        flags: DEFINITIONS.flags.map((f) => (f.key === 'rollout' ? { ...f, active: false } : f)),
      }),
    )
    expect(await values({ distinctId: 'bob' }, svc), 'still cached').to.include({ rollout: true })
    await svc.refresh(project.id)
    expect(await values({ distinctId: 'bob' }, svc)).to.not.have.property('rollout')
    await replaceDefinitions(t.db, project.id, readDefinitions(DEFINITIONS))
  })
})
