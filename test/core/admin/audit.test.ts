import { expect } from 'chai'
import type { Context } from 'koa'
import { MongoClient } from 'mongodb'
import type { Db } from 'mongodb'
import { MongoAuditLog } from '../../../core/admin/audit.ts'
import { ensureCoreIndexes } from '../../../core/model/collections.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'

const asKey = (label?: string) => ({ state: label === undefined ? {} : { adminKeyLabel: label } }) as unknown as Context

describe('admin audit log: the store', () => {
  let client: MongoClient
  let db: Db
  let log: MongoAuditLog
  before(async () => {
    client = await new MongoClient(await testMongoUrl()).connect()
    db = client.db(testDbName('audit_store'))
    await ensureCoreIndexes(db)
    log = new MongoAuditLog(db)
  })
  after(async () => {
    await db.dropDatabase().catch(() => undefined)
    await client.close()
  })

  const flag = (version: number, name: string) => ({
    projectId: 1,
    entityType: 'feature_flag',
    entityId: 5,
    action: 'updated',
    before: null,
    after: { name, version, updated_at: new Date() },
    version,
    ignore: ['version', 'updated_at'],
  })

  it('stores each change with its key label, its JSON states and their difference', async () => {
    await log.record(asKey('alice'), flag(0, 'first'))
    const [doc] = await db.collection('audit_log').find({ project_id: 1 }).toArray()
    expect(doc).to.deep.include({
      entity_type: 'feature_flag',
      entity_id: '5',
      actor: { key_label: 'alice' },
      version: 0,
    })
    expect(doc.after.updated_at).to.be.a('string')
    expect(doc.changes).to.deep.equal([{ path: 'name', after: 'first' }])
    await log.record(asKey(), [flag(1, 'second'), flag(2, 'third')])
    expect(await db.collection('audit_log').countDocuments({ project_id: 1, 'actor.key_label': null })).to.equal(2)
  })

  it('finds the state at a version, newest record first, only since the entity was last imported', async () => {
    expect(await log.stateAt(1, 'feature_flag', 5, 1)).to.include({ name: 'second' })
    expect(await log.stateAt(1, 'feature_flag', '5', 2)).to.include({ name: 'third' })
    expect(await log.stateAt(1, 'feature_flag', 5, 9)).to.equal(undefined)
    expect(await log.stateAt(2, 'feature_flag', 5, 1)).to.equal(undefined)
    await new Promise((resolve) => setTimeout(resolve, 5))
    await log.record(asKey('admin'), { ...flag(4, 'imported'), action: 'imported' })
    expect(await log.stateAt(1, 'feature_flag', 5, 1)).to.equal(undefined)
    expect(await log.stateAt(1, 'feature_flag', 5, 4)).to.include({ name: 'imported' })
    await log.record(asKey('admin'), flag(5, 'after import'))
    expect(await log.stateAt(1, 'feature_flag', 5, 5)).to.include({ name: 'after import' })
  })

  it('reads one record by id, and nothing for an id of another project or of another shape', async () => {
    const { results } = await log.list(1, {}, new URL('http://x/api/projects/1/audit'))
    expect(results.map((r) => r.version)).to.deep.equal([5, 4, 2, 1, 0])
    expect(await log.get(1, results[0].id)).to.deep.equal(results[0])
    expect(await log.get(2, results[0].id)).to.equal(undefined)
    expect(await log.get(1, 'zzz')).to.equal(undefined)
  })
})
