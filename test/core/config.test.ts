import { expect } from 'chai'
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildConfig, ConfigError, loadConfig } from '../../core/config.ts'

function appWith(files: Record<string, unknown>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-config-'))
  mkdirSync(path.join(root, 'config'))
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(root, name), JSON.stringify(content))
  return root
}

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error('expected a ConfigError')
}

describe('config', () => {
  it('applies every default to a minimal config', () => {
    const config = buildConfig({ plugins: [{ plugin: 'validate' }] })
    expect(config.server).to.deep.equal({
      host: '0.0.0.0',
      port: 8000,
      bodyLimitBytes: 20 * 1024 * 1024,
      decodedLimitBytes: 100 * 1024 * 1024,
      eventLimitBytes: 1_000_000,
      requestTimeoutMs: 30_000,
      shutdownTimeoutMs: 10_000,
      adminCorsOrigins: [],
      trustProxy: true,
    })
    expect(config.storage).to.deep.equal({ database: 'hedgerow', dataDir: './data' })
    expect(config.log).to.deep.equal({ level: 'info', format: 'auto' })
  })

  it('takes the log format from LOG_FORMAT and refuses one it does not know', () => {
    const root = appWith({ 'config/default.json': { plugins: [] } })
    expect(loadConfig(root, { LOG_FORMAT: 'json' }).config.log.format).to.equal('json')
    expect(loadConfig(root, { LOG_FORMAT: 'pretty' }).config.log.format).to.equal('pretty')
    const error = errorOf(() => loadConfig(root, { LOG_FORMAT: 'xml' }))
    expect([error.jsonPath, error.reason]).to.deep.equal(['/log/format', 'is not one of the allowed values'])
  })

  it('names the JSON path of an unknown key', () => {
    const error = errorOf(() => buildConfig({ server: { prot: 8000 } }))
    expect(error.jsonPath).to.equal('/server/prot')
    expect(error.reason).to.equal('unknown key')
  })

  it('names the JSON path and reason of a wrong type, inside the plugin list too', () => {
    expect(errorOf(() => buildConfig({ server: { port: '8000' } })).jsonPath).to.equal('/server/port')
    const plugin = errorOf(() => buildConfig({ plugins: [{ plugin: 'validate' }, { plugin: 'x', required: 'yes' }] }))
    expect(plugin.jsonPath).to.equal('/plugins/1/required')
    expect(errorOf(() => buildConfig({ log: { level: 'loud' } })).reason).to.equal('is not one of the allowed values')
  })

  it('layers default.json, <NODE_ENV>.json, CONFIG_FILE and the environment, in that order', () => {
    const root = appWith({
      'config/default.json': { server: { port: 1000, host: '127.0.0.1' }, plugins: [{ plugin: 'validate' }] },
      'config/staging.json': { server: { port: 2000 } },
      'extra.json': { storage: { database: 'from-file' }, plugins: [{ plugin: 'sink-mongo' }] },
    })
    const { config, configDir, sources } = loadConfig(root, {
      NODE_ENV: 'staging',
      CONFIG_FILE: path.join(root, 'extra.json'),
      LOG_LEVEL: 'debug',
      MONGODB_URL: 'mongodb://db:27017',
    })
    expect(config.server.port).to.equal(2000)
    expect(config.server.host).to.equal('127.0.0.1')
    expect(config.storage.database).to.equal('from-file')
    expect(config.storage.mongodbUrl).to.equal('mongodb://db:27017')
    expect(config.log.level).to.equal('debug')
    expect(config.plugins).to.deep.equal([{ plugin: 'sink-mongo' }])
    expect(configDir).to.equal(root)
    expect(sources).to.have.length(3)
  })

  it('lets PORT, HOST, MONGODB_DB and ADMIN_API_KEY override the files', () => {
    const root = appWith({ 'config/default.json': { plugins: [] } })
    const { config } = loadConfig(root, {
      PORT: '9123',
      HOST: '::1',
      MONGODB_DB: 'other',
      ADMIN_API_KEY: 'k'.repeat(20),
    })
    expect([config.server.port, config.server.host, config.storage.database, config.admin.apiKey]).to.deep.equal([
      9123,
      '::1',
      'other',
      'k'.repeat(20),
    ])
  })

  it('defaults to inline mode, and takes queue mode, its role and the NATS servers from the environment', () => {
    const root = appWith({ 'config/default.json': { plugins: [] } })
    const inline = loadConfig(root, {}).config
    expect(inline.mode).to.equal('inline')
    expect(inline.queue).to.include({ role: 'capture', stream: 'HEDGEROW_INGEST', partitions: 16, leaseTtlMs: 15_000 })
    const queue = loadConfig(root, {
      MODE: 'queue',
      QUEUE_ROLE: 'worker',
      NATS_URL: 'nats://a:4222,nats://b:4222',
    }).config
    expect([queue.mode, queue.queue.role, queue.queue.servers]).to.deep.equal([
      'queue',
      'worker',
      ['nats://a:4222', 'nats://b:4222'],
    ])
    expect(errorOf(() => loadConfig(root, { QUEUE_ROLE: 'boss' })).jsonPath).to.equal('/queue/role')
    expect(errorOf(() => buildConfig({ queue: { partitions: 0 } })).jsonPath).to.equal('/queue/partitions')
  })

  it('takes the admin CORS origins from ADMIN_CORS_ORIGINS (comma-separated), none by default, and refuses an origin with a path', () => {
    const root = appWith({ 'config/default.json': { plugins: [] } })
    expect(loadConfig(root, {}).config.server.adminCorsOrigins).to.deep.equal([])
    expect(
      loadConfig(root, { ADMIN_CORS_ORIGINS: 'https://admin.example, http://localhost:3000' }).config.server
        .adminCorsOrigins,
    ).to.deep.equal(['https://admin.example', 'http://localhost:3000'])
    expect(errorOf(() => buildConfig({ server: { adminCorsOrigins: ['https://admin.example/'] } })).jsonPath).to.equal(
      '/server/adminCorsOrigins/0',
    )
  })

  it('rejects a non-numeric PORT with its path', () => {
    const root = appWith({ 'config/default.json': { plugins: [] } })
    expect(errorOf(() => loadConfig(root, { PORT: 'eighty' })).jsonPath).to.equal('/server/port')
  })

  it('rejects a file that is not JSON, and a missing CONFIG_FILE', () => {
    const root = appWith({})
    writeFileSync(path.join(root, 'config/default.json'), '{ nope')
    expect(errorOf(() => loadConfig(root, {})).reason).to.match(/cannot read JSON/)
    const ok = appWith({ 'config/default.json': {} })
    expect(errorOf(() => loadConfig(ok, { CONFIG_FILE: path.join(ok, 'missing.json') })).reason).to.equal(
      'file not found',
    )
  })

  it('ships a config/default.json that validates', () => {
    const { config } = loadConfig(path.resolve(import.meta.dirname, '../..'), {})
    expect(config.plugins.map((p) => p.plugin)).to.include.members(['validate', 'sink-mongo'])
  })

  it('reads labelled admin keys from admin.keys or ADMIN_API_KEYS (label:key, comma-separated), the single key labelled "admin" by default', () => {
    const root = appWith({ 'config/default.json': { plugins: [] } })
    expect(loadConfig(root, {}).config.admin).to.deep.equal({
      apiKeyLabel: 'admin',
      keys: [],
      eventStreamHeartbeatMs: 15_000,
    })
    expect(
      loadConfig(root, { ADMIN_API_KEYS: 'alice:alice-key-0123456789, ci:ci-key-0123456789:x' }).config.admin.keys,
    ).to.deep.equal([
      { label: 'alice', key: 'alice-key-0123456789' },
      { label: 'ci', key: 'ci-key-0123456789:x' },
    ])
    expect(errorOf(() => loadConfig(root, { ADMIN_API_KEYS: 'no-label-key-0123456789' })).jsonPath).to.equal(
      '/admin/keys/0/label',
    )
    expect(errorOf(() => buildConfig({ admin: { keys: [{ label: 'bob', key: 'short' }] } })).jsonPath).to.equal(
      '/admin/keys/0/key',
    )
  })
})
