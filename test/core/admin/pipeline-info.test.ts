/**
 * GET /api/pipeline over real HTTP: the plugins in configured order with the hooks they tapped,
 * their options (defaults applied) with secrets masked, and their error counts.
 */
import { expect } from 'chai'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { builtInPlugins } from '../../../plugins/index.ts'
import { BROKEN_EVENT, brokenStep } from '../../helpers/broken-step.ts'
import { MASK, maskSecrets } from '../../../core/admin/pipeline-info.ts'

type Json = Record<string, any>

describe('admin API: the pipeline', function () {
  this.timeout(30_000)
  let t: TestService
  before(async () => {
    brokenStep.broken = true
    t = await startTestService(
      {
        plugins: [
          { plugin: 'validate' },
          { plugin: 'broken-step', id: 'broken-here', options: { apiKey: 'sk_custom_secret' } },
          { plugin: 'sink-mongo', required: true },
        ],
      },
      { builtIns: { ...builtInPlugins, 'broken-step': brokenStep.plugin } },
    )
  })
  after(() => t.close())

  const pipeline = async () => (await (await t.admin('GET', '/api/pipeline')).json()) as Json

  it('lists the plugins in order with their hooks, masked options and error counts', async () => {
    const before = (await pipeline()).plugins.find((p: Json) => p.id === 'broken-here').errors
    await fetch(`${t.url}/batch`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: t.project.api_token, batch: [{ event: BROKEN_EVENT, distinct_id: 'x' }] }),
    })
    const body = await pipeline()
    expect(body.plugins.map((p: Json) => [p.position, p.id])).to.deep.equal([
      [1, 'validate'],
      [2, 'broken-here'],
      [3, 'sink-mongo'],
    ])
    const broken = body.plugins[1]
    expect(broken.hooks).to.deep.equal([{ hook: 'personUpdate', position: 1, of: 1 }])
    expect(broken.errors).to.equal(before + 1)
    expect(broken.options).to.deep.equal({
      apiKey: MASK,
      upstream: `https://${MASK}:${MASK}@upstream.example/path`,
      nested: { password: MASK, region: 'eu' },
    })
    expect(JSON.stringify(body)).not.to.match(/sk_custom_secret|hunter2|pw-0/)
    expect(body.plugins[2]).to.include({ required: true })
    expect(body.hooks.find((h: Json) => h.hook === 'sink')).to.deep.include({
      policy: 'isolate',
      plugins: ['sink-mongo'],
    })
    expect(body.hooks.map((h: Json) => h.hook)).to.include.members(['validate', 'personUpdate', 'stepFailed'])
  })

  it('needs the admin key', async () => {
    expect((await fetch(`${t.url}/api/pipeline`)).status).to.equal(401)
  })

  it('masks secret-named values at any depth and credentials in URLs, and nothing else', () => {
    expect(
      maskSecrets({
        token: 't',
        servers: ['nats://u:p@host:4222', 'nats://host:4222'],
        mongodbUrl: 'mongodb://admin@db/x',
        list: [{ secretAccessKey: 'k' }],
        apiKeys: ['one', 'two'],
        maxKeysPerOperation: 1000,
        empty: '',
        passphrase: 'words',
        timeoutMs: 5,
      }),
    ).to.deep.equal({
      token: MASK,
      servers: [`nats://${MASK}:${MASK}@host:4222`, 'nats://host:4222'],
      mongodbUrl: `mongodb://${MASK}@db/x`,
      list: [{ secretAccessKey: MASK }],
      apiKeys: [MASK, MASK],
      maxKeysPerOperation: 1000,
      empty: '',
      passphrase: MASK,
      timeoutMs: 5,
    })
  })
})
