import { expect } from 'chai'
import type { CommandStartedEvent, Db, MongoClient } from 'mongodb'
import { ProjectStore, secretKeyDigest } from '../../core/projects.ts'
import { COLLECTIONS, ensureCoreIndexes } from '../../core/model/collections.ts'
import { monitoredClient, testDbName } from '../helpers/mongo.ts'

describe('ProjectStore secret keys', () => {
  let client: MongoClient
  let db: Db
  const commands: CommandStartedEvent[] = []

  before(async () => {
    client = await monitoredClient((event) => commands.push(event))
  })
  beforeEach(async () => {
    db = client.db(testDbName('projects'))
    await ensureCoreIndexes(db)
  })
  after(async () => client?.close())

  const projectsCollection = () => db.collection(COLLECTIONS.projects)

  it('stores the SHA-256 digest of a new secret key and finds the project by the key', async () => {
    const store = new ProjectStore(db)
    const project = await store.create({ name: 'p' })
    const stored = await projectsCollection().findOne({ id: project.id })
    expect(stored?.secret_api_token_sha256)
      .to.equal(secretKeyDigest(project.secretApiToken))
      .and.match(/^[0-9a-f]{64}$/)
    expect((await store.bySecretToken(project.secretApiToken))?.id).to.equal(project.id)
  })

  it('never sends the presented key to the database: the lookup filters on its digest only', async () => {
    const store = new ProjectStore(db)
    const project = await store.create({ name: 'p' })
    const wrong = project.secretApiToken.slice(0, -1) + (project.secretApiToken.endsWith('A') ? 'B' : 'A')
    await store.ensureSecretDigests()
    const from = commands.length
    expect((await store.bySecretToken(project.secretApiToken))?.id).to.equal(project.id)
    expect(await store.bySecretToken(wrong)).to.equal(undefined)
    const sent = commands.slice(from).filter((c) => c.databaseName === db.databaseName)
    const finds = sent.filter((c) => c.commandName === 'find')
    expect(finds).to.have.length(2)
    expect(finds.map((c) => c.command.filter)).to.deep.equal([
      { secret_api_token_sha256: secretKeyDigest(project.secretApiToken) },
      { secret_api_token_sha256: secretKeyDigest(wrong) },
    ])
    // A plain `{secret_api_token: key}` query (an index walk over the key's own bytes) would put the key on the wire.
    for (const command of sent) expect(JSON.stringify(command.command)).not.to.include(project.secretApiToken.slice(4))
  })

  it('goes by the digest field: a project whose digest does not match its key is not found by the key', async () => {
    const store = new ProjectStore(db)
    const project = await store.create({ name: 'p' })
    await projectsCollection().updateOne(
      { id: project.id },
      { $set: { secret_api_token_sha256: secretKeyDigest('something else') } },
    )
    expect(await store.bySecretToken(project.secretApiToken)).to.equal(undefined)
  })

  it('confirms the key itself: a digest match alone does not authenticate', async () => {
    const store = new ProjectStore(db)
    const project = await store.create({ name: 'p' })
    const forged = 'phs_forged-key-whose-digest-was-planted'
    await projectsCollection().updateOne(
      { id: project.id },
      { $set: { secret_api_token_sha256: secretKeyDigest(forged) } },
    )
    expect(await store.bySecretToken(forged)).to.equal(undefined)
  })

  it('gives projects stored before digests existed theirs, so their keys keep working, and indexes the digest', async () => {
    const old = [
      {
        id: 1,
        name: 'old-1',
        api_token: 'phc_old1',
        secret_api_token: 'phs_old-secret-key-number-one',
        timezone: 'UTC',
        created_at: new Date(),
      },
      {
        id: 2,
        name: 'old-2',
        api_token: 'phc_old2',
        secret_api_token: 'phs_old-secret-key-number-two',
        timezone: 'UTC',
        created_at: new Date(),
      },
    ]
    await projectsCollection().insertMany(old.map((doc) => ({ ...doc })))
    const store = new ProjectStore(db)
    expect((await store.bySecretToken('phs_old-secret-key-number-two'))?.name).to.equal('old-2')
    expect((await store.bySecretToken('phs_old-secret-key-number-one'))?.name).to.equal('old-1')
    expect(await store.bySecretToken('phs_old-secret-key-number-thre')).to.equal(undefined)
    for (const doc of old) {
      expect((await projectsCollection().findOne({ id: doc.id }))?.secret_api_token_sha256).to.equal(
        secretKeyDigest(doc.secret_api_token),
      )
    }
    const indexes = await projectsCollection().indexes()
    expect(indexes.map((i) => i.key)).to.deep.include({ secret_api_token_sha256: 1 })
  })
})
