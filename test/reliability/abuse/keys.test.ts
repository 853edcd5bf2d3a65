import { expect } from 'chai'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { keysEqual } from '../../../core/admin/key.ts'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'
import { startServiceProcess } from '../../helpers/process.ts'

function medianNs(run: () => void, rounds: number): number {
  const times: number[] = []
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint()
    run()
    times.push(Number(process.hrtime.bigint() - start))
  }
  return times.sort((a, b) => a - b)[Math.floor(rounds / 2)]!
}

describe('admin key comparison (keysEqual)', () => {
  it('is true only for the identical key, whatever the lengths', () => {
    expect(keysEqual('hra_secret-key-0123', 'hra_secret-key-0123')).to.equal(true)
    for (const other of ['', 'h', 'hra_secret-key-012', 'hra_secret-key-01234', 'HRA_secret-key-0123', 'hra_secret-key-0123\u0000']) {
      expect(keysEqual(other, 'hra_secret-key-0123'), JSON.stringify(other)).to.equal(false)
    }
  })

  it('takes the same time whether the first or the last character differs (no early exit)', () => {
    // Long keys make an early-exit comparison visible: memcmp of 256 KiB takes microseconds, a
    // first-byte mismatch takes nothing. Hash-then-timingSafeEqual costs the same either way.
    const expected = 'k'.repeat(256 * 1024)
    const firstDiffers = 'x' + expected.slice(1)
    const lastDiffers = expected.slice(0, -1) + 'x'
    for (let i = 0; i < 20; i++) keysEqual(firstDiffers, expected), keysEqual(lastDiffers, expected)
    const first = medianNs(() => keysEqual(firstDiffers, expected), 150)
    const last = medianNs(() => keysEqual(lastDiffers, expected), 150)
    expect(first / last).to.be.within(0.6, 1.6)
  })
})

describe('keys in logs (the service as a process, log level debug)', function () {
  this.timeout(60_000)

  it('never writes the configured admin key or a project secret key, used right or wrong', async () => {
    const adminKey = 'hra_log-leak-admin-key-7f3a9c'
    const service = await startServiceProcess({
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'hedgerow-logleak-')),
      MONGODB_URL: await testMongoUrl(),
      MONGODB_DB: testDbName('logleak'),
      ADMIN_API_KEY: adminKey,
      LOG_LEVEL: 'debug',
    })
    try {
      const admin = { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' }
      const project = (await (await fetch(`${service.url}/api/projects`, { method: 'POST', headers: admin, body: '{"name":"leak"}' })).json()) as { api_token: string; secret_api_token: string }
      const secret = project.secret_api_token
      const calls: Array<[string, RequestInit]> = [
        ['/api/projects', { headers: admin }],
        ['/api/projects', { headers: { Authorization: `Bearer ${adminKey}0` } }],
        ['/api/projects', { headers: { Authorization: `Bearer ${secret}` } }],
        ['/api/feature_flag/local_evaluation', { headers: { Authorization: `Bearer ${secret}` } }],
        ['/api/feature_flag/local_evaluation?token=' + secret, { headers: { Authorization: `Bearer ${secret}x` } }],
        [`/flags/definitions?token=${project.api_token}`, { headers: { Authorization: `Bearer ${secret}` } }],
        ['/i/v0/e/', { method: 'POST', body: JSON.stringify({ api_key: secret, event: 'e', distinct_id: 'd' }) }],
        ['/i/v0/e/', { method: 'POST', body: JSON.stringify({ api_key: adminKey, event: 'e', distinct_id: 'd' }) }],
        ['/flags/?v=2', { method: 'POST', body: JSON.stringify({ api_key: secret, distinct_id: 'd' }) }],
        ['/i/v0/e/', { method: 'POST', body: JSON.stringify({ api_key: project.api_token, event: 'e', distinct_id: secret, properties: { $set: { k: adminKey } } }) }],
      ]
      for (const [p, init] of calls) await (await fetch(service.url + p, init)).arrayBuffer()
      await service.waitFor((l) => l.msg === 'request' && l.path === '/i/v0/e/' && l.status === 200, 'the last request line')
    } finally {
      await service.kill('SIGTERM')
    }
    const output = service.output()
    expect(output.split('\n').length).to.be.greaterThan(10)
    expect(output).not.to.include(adminKey)
    expect(output).not.to.match(/phs_[A-Za-z0-9_-]{8,}/)
  })
})
