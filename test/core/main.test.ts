import { expect } from 'chai'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { tcpListeningPorts } from '../helpers/listening.ts'
import { spawnService, startServiceProcess } from '../helpers/process.ts'
import { testDbName, testMongoUrl } from '../helpers/mongo.ts'

describe('main (npm start)', () => {
  it('starts, logs one JSON line per request, and exits 0 on SIGTERM after finishing in-flight work', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-main-'))
    const running = await startServiceProcess({
      DATA_DIR: dataDir,
      MONGODB_URL: await testMongoUrl(),
      MONGODB_DB: testDbName('main'),
      ADMIN_API_KEY: 'main-test-admin-key-123',
    })
    const created = await fetch(`${running.url}/api/projects`, {
      method: 'POST',
      headers: { Authorization: 'Bearer main-test-admin-key-123', 'Content-Type': 'application/json' },
      body: '{"name":"p"}',
    })
    const { api_token } = (await created.json()) as { api_token: string }
    const capture = await fetch(`${running.url}/i/v0/e/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: api_token, event: 'e', distinct_id: 'd' }),
    })
    expect(capture.status).to.equal(200)
    const access = await running.waitFor((l) => l.msg === 'request' && l.path === '/i/v0/e/', 'access log line')
    expect(access).to.include({ method: 'POST', status: 200, project: 1 }).and.to.have.property('ms')
    running.process.kill('SIGTERM')
    expect(await running.exited).to.equal(0)
    expect(running.lines.some((l) => l.msg === 'shutting down')).to.equal(true)
  })

  it('keeps the embedded database on a Unix socket in its 0700 folder (its only TCP port is the HTTP one), as a replica set whose events the console follows live', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-main-'))
    const running = await startServiceProcess({
      DATA_DIR: dataDir,
      MONGODB_URL: '',
      ADMIN_API_KEY: 'main-test-admin-key-123',
    })
    try {
      const mongoDir = path.join(dataDir, 'mongo')
      const socketPath = path.join(mongoDir, 'mongod.sock')
      const logged = running.lines.find((l) => typeof l.dataDir === 'string' && typeof l.url === 'string')
      expect(logged?.url).to.equal(`mongodb://${encodeURIComponent(socketPath)}/?directConnection=true&replicaSet=rs0`)
      expect(statSync(socketPath).isSocket()).to.equal(true)
      expect(statSync(mongoDir).mode & 0o777).to.equal(0o700)
      const created = await fetch(`${running.url}/api/projects`, {
        method: 'POST',
        headers: { Authorization: 'Bearer main-test-admin-key-123', 'Content-Type': 'application/json' },
        body: '{"name":"p"}',
      })
      expect(created.status).to.equal(201)
      const project = (await created.json()) as { id: number; api_token: string }
      // the console's live view is a change stream: it needs the replica set
      const live = new AbortController()
      const stream = await fetch(`${running.url}/api/projects/${project.id}/events/stream`, {
        headers: { Authorization: 'Bearer main-test-admin-key-123' },
        signal: live.signal,
      })
      expect(stream.status).to.equal(200)
      expect(stream.headers.get('content-type')).to.match(/^text\/event-stream/)
      const captured = await fetch(`${running.url}/i/v0/e/`, {
        method: 'POST',
        body: JSON.stringify({ api_key: project.api_token, event: 'followed live', distinct_id: 'd' }),
      })
      expect(captured.status).to.equal(200)
      let text = ''
      const decoder = new TextDecoder()
      for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true })
        if (text.includes('followed live')) break
      }
      live.abort()
      expect(text).to.include('"event":"followed live"')
      const ports = tcpListeningPorts(running.process.pid!)
      if (ports) expect(ports).to.deep.equal([Number(new URL(running.url).port)])
    } finally {
      running.process.kill('SIGTERM')
      expect(await running.exited).to.equal(0)
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('logs human-readable lines when LOG_FORMAT=pretty (as at a terminal), JSON lines to a pipe otherwise', async function () {
    this.timeout(60_000)
    const env = async () => ({
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'hedgerow-main-')),
      MONGODB_URL: await testMongoUrl(),
      MONGODB_DB: testDbName('main'),
      ADMIN_API_KEY: 'main-test-admin-key-123',
    })
    const pretty = spawnService({ ...(await env()), LOG_FORMAT: 'pretty' })
    const json = spawnService(await env())
    await Promise.all([
      pretty.waitFor(
        (l) =>
          typeof l.msg === 'string' && / INFO: hedgerow is listening \{"url":"http:\/\/127\.0\.0\.1:\d+"/.test(l.msg),
        'pretty listening line',
        50_000,
      ),
      json.waitFor((l) => l.msg === 'hedgerow is listening', 'JSON listening line', 50_000),
    ])
    await Promise.all([pretty.kill('SIGTERM'), json.kill('SIGTERM')])
    expect(pretty.output()).to.not.match(/^\{/m)
    expect(json.lines.find((l) => l.msg === 'hedgerow is listening')).to.include({ level: 30, service: 'hedgerow' })
  })

  it('exits 1 naming the JSON path when the config has an unknown key', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-badconf-'))
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ server: { prot: 1 } }))
    const running = spawnService({ CONFIG_FILE: path.join(dir, 'bad.json') })
    expect(await running.exited).to.equal(1)
    expect(running.output()).to.match(/\/server\/prot: unknown key/)
  })

  it('exits 1 naming a plugin that cannot be loaded', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-badplugin-'))
    writeFileSync(
      path.join(dir, 'bad.json'),
      JSON.stringify({ plugins: [{ plugin: 'validate' }, { plugin: 'hedgerow-plugin-sink-absent' }] }),
    )
    const running = spawnService({
      CONFIG_FILE: path.join(dir, 'bad.json'),
      MONGODB_URL: await testMongoUrl(),
      DATA_DIR: dir,
    })
    expect(await running.exited).to.equal(1)
    expect(running.output()).to.match(/hedgerow-plugin-sink-absent/)
  })
})
