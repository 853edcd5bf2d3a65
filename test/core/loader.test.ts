import { expect } from 'chai'
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import type { CommandStartedEvent } from 'mongodb'
import { pino } from 'pino'
import { ConfigError } from '../../core/config.ts'
import type { PluginEntry } from '../../core/config.ts'
import { loadPlugins, PluginLoadError, runTeardowns } from '../../core/loader.ts'
import type { LoaderContext } from '../../core/loader.ts'
import { createHooks } from '../../core/hooks.ts'
import { Engine } from '../../core/engine.ts'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import type { PluginDefinition } from '../../core/plugin-api.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { ProjectStore } from '../../core/projects.ts'
import { monitoredClient, testDbName, testMongoUrl } from '../helpers/mongo.ts'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/plugins')
const received = () => ((globalThis as Record<symbol, unknown[]>)[Symbol.for('hedgerow.test.ok-sink')] ??= [])

/** An application folder with the fixture packages installed in node_modules, as npm would. */
function scratchApp(): { rootDir: string; configDir: string } {
  const rootDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-loader-'))
  for (const [folder, name] of [
    ['ok-sink', 'hedgerow-plugin-sink-ok'],
    ['cjs-sink', '@acme/hedgerow-plugin-sink-cjs'],
    ['throws-on-import', 'hedgerow-plugin-sink-throws'],
    ['missing-dependency', 'hedgerow-plugin-sink-missing-dep'],
    ['wrong-api-version', 'hedgerow-plugin-sink-old'],
    ['not-a-plugin', 'hedgerow-plugin-sink-invalid'],
    ['bad-options-schema', 'hedgerow-plugin-sink-options'],
    ['slow-setup', 'hedgerow-plugin-sink-slow'],
    ['taps-after-setup', 'hedgerow-plugin-late-tap'],
  ])
    cpSync(path.join(FIXTURES, folder), path.join(rootDir, 'node_modules', name), { recursive: true })
  const configDir = path.join(rootDir, 'config')
  mkdirSync(configDir)
  cpSync(path.join(FIXTURES, 'ok-sink'), path.join(rootDir, 'local-plugins', 'my-sink'), { recursive: true })
  writeFileSync(path.join(rootDir, 'package.json'), '{"name":"scratch","private":true}')
  return { rootDir, configDir }
}

describe('loader', () => {
  let client: MongoClient
  let app: { rootDir: string; configDir: string }
  before(async () => {
    client = new MongoClient(await testMongoUrl())
    app = scratchApp()
  })
  after(() => client.close())

  function context(overrides: Partial<LoaderContext> = {}): LoaderContext {
    const scope = {}
    return {
      hooks: createHooks(scope),
      scope,
      db: client.db('loader'),
      projects: new ProjectStore(client.db('loader')),
      isAdminKey: () => false,
      logger: pino({ level: 'silent' }),
      builtIns: builtInPlugins,
      dataDir: app.rootDir,
      // generous: sink-mongo's first setup creates indexes, which a loaded machine can slow past 150 ms
      setupTimeoutMs: 10_000,
      ...app,
      ...overrides,
    }
  }
  const load = (entries: PluginEntry[], overrides: Partial<LoaderContext> = {}) =>
    loadPlugins([{ plugin: 'validate' }, ...entries], context(overrides))
  async function failure(
    entries: PluginEntry[],
    overrides: Partial<LoaderContext> = {},
  ): Promise<PluginLoadError | ConfigError> {
    try {
      await load(entries, overrides)
    } catch (error) {
      if (error instanceof PluginLoadError || error instanceof ConfigError) return error
      throw error
    }
    throw new Error('expected the load to fail')
  }

  it('loads a built-in by name, an npm package by name and a ./path from the config folder', async () => {
    const loaded = await load([
      { plugin: 'sink-mongo' },
      { plugin: 'hedgerow-plugin-sink-ok' },
      { plugin: '../local-plugins/my-sink', id: 'local-sink' },
    ])
    expect(loaded.map((p) => [p.id, p.source.split(' ')[0]])).to.deep.equal([
      ['validate', 'built-in'],
      ['sink-mongo', 'built-in'],
      ['hedgerow-plugin-sink-ok', 'npm'],
      ['local-sink', 'path'],
    ])
    expect(loaded[2].source).to.equal('npm hedgerow-plugin-sink-ok@1.0.0')
    expect(loaded[2].tapped).to.deep.equal(['sink'])
  })

  it('loads a scoped CommonJS package through its named `plugin` export', async () => {
    const loaded = await load([{ plugin: '@acme/hedgerow-plugin-sink-cjs' }])
    expect(loaded[1].id).to.equal('@acme/hedgerow-plugin-sink-cjs')
  })

  it('stops boot naming a package that is not installed, and says how to install it', async () => {
    const error = await failure([{ plugin: 'hedgerow-plugin-sink-nowhere' }])
    expect(error.message)
      .to.match(/hedgerow-plugin-sink-nowhere/)
      .and.match(/npm install/)
  })

  it('tells a plugin that throws on import apart from one whose own dependency is missing', async () => {
    expect(await failure([{ plugin: 'hedgerow-plugin-sink-throws' }])).to.include({ code: 'INGEST_ERR_PLUGIN_IMPORT' })
    const missing = await failure([{ plugin: 'hedgerow-plugin-sink-missing-dep' }])
    expect(missing).to.include({
      code: 'INGEST_ERR_PLUGIN_DEPENDENCY_MISSING',
      plugin: 'hedgerow-plugin-sink-missing-dep',
    })
  })

  it('refuses a plugin built for another API version, and a module that is not a plugin', async () => {
    expect(await failure([{ plugin: 'hedgerow-plugin-sink-old' }])).to.include({
      code: 'INGEST_ERR_PLUGIN_API_MISMATCH',
    })
    expect(await failure([{ plugin: 'hedgerow-plugin-sink-invalid' }])).to.include({
      code: 'INGEST_ERR_PLUGIN_INVALID',
    })
  })

  it('validates options against the plugin schema before setup, naming the config path', async () => {
    const error = await failure([
      { plugin: 'sink-mongo' },
      { plugin: 'hedgerow-plugin-sink-options', options: { url: 42 } },
    ])
    expect(error).to.be.instanceOf(ConfigError)
    expect((error as ConfigError).jsonPath).to.equal('/plugins/2/options/url')
    const unknown = await failure([{ plugin: 'sink-mongo', options: { colection: 'x' } }])
    expect((unknown as ConfigError).jsonPath).to.equal('/plugins/1/options/colection')
  })

  it('applies option defaults from the schema', async () => {
    let seen: unknown
    const spy = definePlugin({
      name: 'spy',
      apiVersion: API_VERSION,
      optionsSchema: builtInPlugins['sink-mongo'].optionsSchema!,
      setup: (api, options) => void ((seen = options), api.hooks.sink.tap({ name: api.id }, () => undefined)),
    })
    await load([{ plugin: 'spy' }], { builtIns: { ...builtInPlugins, spy: spy as PluginDefinition } })
    expect(seen).to.deep.equal({ collection: 'events', writeConcern: 'majority' })
  })

  it('fails a setup that does not finish within the timeout, and refuses its late tap', async () => {
    const error = await failure([{ plugin: 'hedgerow-plugin-sink-slow' }, { plugin: 'sink-mongo' }], {
      setupTimeoutMs: 150,
    })
    expect(error).to.include({ code: 'INGEST_ERR_PLUGIN_SETUP' })
    expect(error.message).to.match(/150 ms/)
  })

  it('skips an optional plugin that fails, removing the taps it made before failing', async () => {
    const halfway = definePlugin({
      name: 'halfway',
      apiVersion: API_VERSION,
      setup(api) {
        api.hooks.sink.tapPromise({ name: api.id }, async () => undefined)
        throw new Error('connection refused')
      },
    })
    const ctx = context({ builtIns: { ...builtInPlugins, halfway: halfway as PluginDefinition } })
    const loaded = await loadPlugins(
      [{ plugin: 'validate' }, { plugin: 'halfway', optional: true }, { plugin: 'sink-mongo' }],
      ctx,
    )
    expect(loaded.map((p) => p.id)).to.deep.equal(['validate', 'sink-mongo'])
    expect(ctx.hooks.sink.taps.map((t) => t.name)).to.deep.equal(['sink-mongo'])
  })

  it('hands each plugin tap-only hooks: it can tap them, never run them', async () => {
    let seen: Record<string, string[]> = {}
    const curious = definePlugin({
      name: 'curious',
      apiVersion: API_VERSION,
      setup(api) {
        seen = { validate: Object.keys(api.hooks.validate), closing: Object.keys(api.hooks.closing) }
        api.hooks.sink.tapPromise({ name: api.id }, async () => undefined)
      },
    })
    const ctx = context({ builtIns: { ...builtInPlugins, curious: curious as PluginDefinition } })
    await loadPlugins([{ plugin: 'validate' }, { plugin: 'curious' }], ctx)
    expect(seen).to.deep.equal({ validate: ['tap', 'tapAsync', 'tapPromise'], closing: ['tap'] })
    expect(ctx.hooks.sink.taps.map((t) => t.name)).to.deep.equal(['curious'])
  })

  it('refuses taps made after setup returned', async () => {
    await load([{ plugin: 'hedgerow-plugin-late-tap' }])
    const late = (globalThis as Record<symbol, () => void>)[Symbol.for('hedgerow.test.late-tap')]
    expect(late).to.throw(/outside a plugin's setup/)
  })

  it('checks required services and that validate and sink are tapped', async () => {
    const needy = definePlugin({
      name: 'needy',
      apiVersion: API_VERSION,
      requires: ['flags' as never],
      setup: () => undefined,
    })
    expect(
      await failure([{ plugin: 'needy' }], { builtIns: { ...builtInPlugins, needy: needy as PluginDefinition } }),
    ).to.include({ code: 'INGEST_ERR_PLUGIN_REQUIRES' })
    expect(await failure([])).to.include({ code: 'INGEST_ERR_NO_TAP' })
  })

  it("hands plugins the core's services and leaves the plugins' own in the registry for the core", async () => {
    const groups = { marker: 'the core groups reader' }
    const seen: unknown[] = []
    const reader = definePlugin({
      name: 'reader',
      apiVersion: API_VERSION,
      requires: ['groups'],
      setup: (api) => {
        seen.push(api.use('groups'))
        api.hooks.sink.tap({ name: api.id }, () => undefined)
        api.provide('events', { page: async () => [] })
      },
    })
    const services = new Map<string, unknown>([['groups', groups]])
    const builtIns = { ...builtInPlugins, reader: reader as PluginDefinition }
    await load([{ plugin: 'reader' }], { builtIns, services })
    expect(seen).to.deep.equal([groups])
    expect(services.get('events')).to.have.property('page')
  })

  it('hands plugins batched database reads: concurrent lookups of two projects become one find each', async () => {
    const commands: CommandStartedEvent[] = []
    const monitored = await monitoredClient((event) => commands.push(event))
    const db = monitored.db(testDbName('loader_batching'))
    try {
      const rows = db.collection<{ project_id: number; key: string; n: number }>('rows')
      await rows.insertMany(
        [1, 2].flatMap((projectId) => ['a', 'b', 'c'].map((key, n) => ({ project_id: projectId, key, n }))),
      )
      type Key = { projectId: number; key: string }
      let lookup: ((key: Key) => Promise<number | undefined>) | undefined
      const bulkReader = definePlugin({
        name: 'bulk-reader',
        apiVersion: API_VERSION,
        setup: (api) => {
          const { coalescer, byProject, findAll } = api.batching
          const id = (key: Key) => `${key.projectId}:${key.key}`
          const numbers = coalescer<Key, number>(id, async (keys) => {
            const found = new Map<string, number>()
            for (const [projectId, group] of byProject(keys)) {
              const filter = { project_id: projectId, key: { $in: group.map((k) => k.key) } }
              for (const row of await findAll(
                api.db.collection<{ project_id: number; key: string; n: number }>('rows'),
                filter,
                { _id: 0 },
                group.length,
              ))
                found.set(id({ projectId, key: row.key }), row.n)
            }
            return found
          })
          lookup = (key) => numbers.get(key)
          api.hooks.sink.tap({ name: api.id }, () => undefined)
        },
      })
      await load([{ plugin: 'bulk-reader' }], {
        db,
        builtIns: { ...builtInPlugins, 'bulk-reader': bulkReader as PluginDefinition },
      })
      commands.length = 0
      const keys = [1, 2].flatMap((projectId) => ['a', 'c', 'missing', 'a'].map((key) => ({ projectId, key })))
      expect(await Promise.all(keys.map((key) => lookup!(key)))).to.deep.equal([0, 2, undefined, 0, 0, 2, undefined, 0])
      expect(commands.filter((c) => c.commandName === 'find').map((c) => c.command.filter.project_id)).to.deep.equal([
        1, 2,
      ])
    } finally {
      await db.dropDatabase().catch(() => undefined)
      await monitored.close()
    }
  })

  it('refuses two plugins with one id', async () => {
    expect(await failure([{ plugin: 'sink-mongo' }, { plugin: 'sink-mongo' }])).to.include({
      code: 'INGEST_ERR_PLUGIN_DUPLICATE',
    })
  })

  it('runs teardowns in reverse load order, and a failing teardown does not stop the next', async () => {
    const order: string[] = []
    const plugin = (name: string, fail = false) =>
      definePlugin({
        name,
        apiVersion: API_VERSION,
        setup: (api) => {
          api.hooks.sink.tap({ name: api.id }, () => undefined)
          return () => {
            order.push(name)
            if (fail) throw new Error('teardown failed')
          }
        },
      })
    const builtIns = {
      ...builtInPlugins,
      a: plugin('a') as PluginDefinition,
      b: plugin('b', true) as PluginDefinition,
      c: plugin('c') as PluginDefinition,
    }
    const loaded = await load([{ plugin: 'a' }, { plugin: 'b' }, { plugin: 'c' }], { builtIns })
    await runTeardowns(loaded, pino({ level: 'silent' }))
    expect(order).to.deep.equal(['c', 'b', 'a'])
  })

  it('an npm sink receives events through the hook', async () => {
    const ctx = context()
    await loadPlugins([{ plugin: 'validate' }, { plugin: 'hedgerow-plugin-sink-ok', id: 'mirror' }], ctx)
    const before = received().length
    await Engine.build(ctx.hooks, { stepTimeoutMs: 1000 }).runSinks({
      project: { id: 1, name: 'p', apiToken: 't', secretApiToken: 's', timezone: 'UTC' },
      events: [{ uuid: 'u1', event: 'e', distinctId: 'd', properties: {}, timestamp: new Date() }],
      receivedAt: new Date(),
      historicalMigration: false,
    })
    expect(received().slice(before)).to.deep.equal([{ sink: 'mirror', uuid: 'u1', event: 'e' }])
  })
})
