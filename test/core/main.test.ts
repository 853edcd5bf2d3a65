import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ROOT_DIR } from '../helpers/service.ts'
import { testDbName, testMongoUrl } from '../helpers/mongo.ts'

interface Running {
  exited: Promise<{ code: number | null; stderr: string }>
  lines: Array<Record<string, unknown>>
  waitFor(msg: string): Promise<Record<string, unknown>>
  kill(signal: NodeJS.Signals): void
}

/** `npm start` as an operator runs it: `tsx core/main.ts` from the project root. */
function start(env: Record<string, string>): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts'], { cwd: ROOT_DIR, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: Array<Record<string, unknown>> = []
  let stderr = ''
  let buffer = ''
  const waiters: Array<() => void> = []
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString()
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>)
      } catch {
        lines.push({ msg: line })
      }
      waiters.splice(0).forEach((w) => w())
    }
  })
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stderr })))
  return {
    exited,
    lines,
    kill: (signal) => child.kill(signal),
    async waitFor(msg) {
      const deadline = Date.now() + 15_000
      for (;;) {
        const found = lines.find((l) => l.msg === msg)
        if (found) return found
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no "${msg}" log line; stderr: ${stderr}`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 200)
        })
      }
    },
  }
}

describe('main (npm start)', () => {
  it('starts, logs one JSON line per request, and exits 0 on SIGTERM after finishing in-flight work', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-main-'))
    const running = start({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, MONGODB_URL: await testMongoUrl(), MONGODB_DB: testDbName('main'), ADMIN_API_KEY: 'main-test-admin-key-123', LOG_LEVEL: 'info' })
    const { url } = (await running.waitFor('hedgerow is listening')) as { url: string }
    const created = await fetch(`${url}/api/projects`, { method: 'POST', headers: { Authorization: 'Bearer main-test-admin-key-123', 'Content-Type': 'application/json' }, body: '{"name":"p"}' })
    const { api_token } = (await created.json()) as { api_token: string }
    const capture = await fetch(`${url}/i/v0/e/`, { method: 'POST', body: JSON.stringify({ api_key: api_token, event: 'e', distinct_id: 'd' }) })
    expect(capture.status).to.equal(200)
    const access = await running.waitFor('request')
    expect(access).to.include.keys('method', 'path', 'status', 'ms')
    running.kill('SIGTERM')
    const { code } = await running.exited
    expect(code).to.equal(0)
    expect(running.lines.some((l) => l.msg === 'shutting down')).to.equal(true)
  })

  it('exits 1 naming the JSON path when the config has an unknown key', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-badconf-'))
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ server: { prot: 1 } }))
    const { code, stderr } = await start({ CONFIG_FILE: path.join(dir, 'bad.json') }).exited
    expect(code).to.equal(1)
    expect(stderr).to.match(/\/server\/prot: unknown key/)
  })

  it('exits 1 naming a plugin that cannot be loaded', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-badplugin-'))
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ plugins: [{ plugin: 'validate' }, { plugin: 'hedgerow-plugin-sink-absent' }] }))
    const { code, stderr } = await start({ CONFIG_FILE: path.join(dir, 'bad.json'), MONGODB_URL: await testMongoUrl(), DATA_DIR: dir }).exited
    expect(code).to.equal(1)
    expect(stderr).to.match(/hedgerow-plugin-sink-absent/)
  })
})
