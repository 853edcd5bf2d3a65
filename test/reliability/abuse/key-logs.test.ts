/**
 * The admin key and secret project keys never appear in the service's output: the service runs as
 * `npm start` runs it, at log level debug, and gets the keys in every place the SDKs and the admin
 * API put them (and some they do not): Authorization headers, query parameters, paths, JSON,
 * gzip, base64 and form bodies, used right and wrong. Its whole output is then searched.
 */
import { expect } from 'chai'
import { mkdtempSync, readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import os from 'node:os'
import path from 'node:path'
import { PostHog } from 'posthog-node'
import { testDbName, testMongoUrl } from '../../helpers/mongo.ts'
import { startServiceProcess } from '../../helpers/process.ts'

type Call = [string, RequestInit]

/** Every request shape carrying `key` that a client could send, with `token` as the project's public key. */
function callsCarrying(key: string, token: string): Call[] {
  const json = { 'Content-Type': 'application/json' }
  const event = (fields: Record<string, unknown>) =>
    JSON.stringify({ api_key: token, event: 'e', distinct_id: 'd', ...fields })
  const base64 = Buffer.from(event({ properties: { key } })).toString('base64')
  return [
    ['/api/projects', { headers: { Authorization: `Bearer ${key}` } }],
    ['/api/projects', { headers: { Authorization: `Bearer ${key}0` } }],
    ['/api/projects', { headers: { Authorization: `Basic ${key}` } }],
    ['/api/projects', { headers: { 'X-Api-Key': key, Cookie: `session=${key}` } }],
    [`/api/projects?api_key=${key}&personal_api_key=${key}`, {}],
    [`/api/feature_flag/local_evaluation?token=${token}&send_cohorts`, { headers: { Authorization: `Bearer ${key}` } }],
    [`/api/feature_flag/local_evaluation?token=${key}`, { headers: { Authorization: `Bearer ${key}x` } }],
    [
      `/api/projects/@current/feature_flags/f/remote_config?token=${token}`,
      { headers: { Authorization: `Bearer ${key}` } },
    ],
    [`/flags/definitions?token=${token}&send_cohorts`, { headers: { Authorization: `Bearer ${key}` } }],
    [`/flags/definitions?token=${key}&secret_api_key=${key}`, { headers: { Authorization: `Bearer ${key}` } }],
    [`/api/projects/${key}/events`, { headers: { Authorization: `Bearer ${key}` } }],
    [`/${encodeURIComponent(key)}`, {}],
    [`/flags/definitions/${key}`, {}],
    [
      '/api/projects',
      { method: 'POST', headers: { Authorization: `Bearer ${key}`, ...json }, body: `{"name":"${key}` },
    ],
    [
      '/i/v0/e/',
      { method: 'POST', headers: json, body: JSON.stringify({ api_key: key, event: 'e', distinct_id: 'd' }) },
    ],
    [
      '/i/v0/e/',
      { method: 'POST', headers: json, body: event({ distinct_id: key, properties: { $set: { k: key }, [key]: 1 } }) },
    ],
    [`/i/v0/e/?token=${key}&api_key=${key}`, { method: 'POST', headers: json, body: `{"api_key":"${key}"` }],
    [
      '/batch/',
      {
        method: 'POST',
        headers: { 'Content-Encoding': 'gzip' },
        body: new Uint8Array(gzipSync(JSON.stringify({ api_key: key, batch: [{ event: 'e', distinct_id: key }] }))),
      },
    ],
    [
      '/e/?compression=base64',
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `data=${encodeURIComponent(base64)}&secret_api_key=${key}`,
      },
    ],
    [
      '/flags/?v=2',
      {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ api_key: key, distinct_id: key, person_properties: { k: key } }),
      },
    ],
    [
      '/decide/?v=3',
      { method: 'POST', headers: json, body: JSON.stringify({ token: token, distinct_id: 'd', groups: { g: key } }) },
    ],
  ]
}

async function send(url: string, calls: Call[]): Promise<void> {
  for (const [p, init] of calls) await (await fetch(url + p, init)).arrayBuffer()
  // A last request the test can see in the log: everything before it has been logged too.
  await (await fetch(`${url}/_liveness?last`)).arrayBuffer()
}

const lastLine = (l: Record<string, unknown>) => l.msg === 'request' && l.path === '/_liveness'
const occurrences = (text: string, key: string) => text.split(key).length - 1

describe('keys in logs (the service as a process, log level debug)', function () {
  this.timeout(90_000)

  it('never writes a configured admin key (of any shape) or a project secret key, used right or wrong, wherever it is sent', async () => {
    // Not hra_-shaped, so only the registered-key redaction can catch it.
    const adminKey = 'configured-Admin-Key-7f3a9c51'
    const service = await startServiceProcess({
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'hedgerow-logleak-')),
      MONGODB_URL: await testMongoUrl(),
      MONGODB_DB: testDbName('logleak'),
      ADMIN_API_KEY: adminKey,
      LOG_LEVEL: 'debug',
    })
    let secret = ''
    try {
      const admin = { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' }
      const project = (await (
        await fetch(`${service.url}/api/projects`, { method: 'POST', headers: admin, body: '{"name":"leak"}' })
      ).json()) as { api_token: string; secret_api_token: string }
      secret = project.secret_api_token
      // posthog-node as a server would use it: the secret key as personalApiKey for local evaluation.
      const sdk = new PostHog(project.api_token, {
        host: service.url,
        personalApiKey: secret,
        flushAt: 1,
        fetchRetryCount: 0,
        featureFlagsPollingInterval: 600_000,
      })
      await sdk.getAllFlags('d', { onlyEvaluateLocally: true })
      await sdk.getRemoteConfigPayload('f').catch(() => undefined)
      sdk.capture({ distinctId: 'd', event: 'e', properties: { key: secret } })
      await sdk.shutdown()
      await send(service.url, [
        ...callsCarrying(secret, project.api_token),
        ...callsCarrying(adminKey, project.api_token),
      ])
      await service.waitFor(lastLine, 'the last request line')
    } finally {
      await service.kill('SIGTERM')
    }
    const output = service.output()
    const requestLines = output.split('\n').filter((l) => l.includes('"msg":"request"'))
    expect(requestLines.length).to.be.greaterThan(40)
    expect(occurrences(output, adminKey)).to.equal(0)
    expect(occurrences(output, secret.slice(4))).to.equal(0)
    expect(output).not.to.match(/phs_[A-Za-z0-9_-]{8,}/)
  })

  it('shows a generated admin key once, at first start, and never again', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-logleak-'))
    const env = {
      DATA_DIR: dataDir,
      MONGODB_URL: await testMongoUrl(),
      MONGODB_DB: testDbName('logleak'),
      LOG_LEVEL: 'debug',
    }
    const outputs: string[] = []
    let adminKey = ''
    for (const start of ['first', 'second']) {
      const service = await startServiceProcess(env)
      try {
        adminKey = readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim()
        const project = (await (
          await fetch(`${service.url}/api/projects`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${adminKey}` },
            body: `{"name":"${start}"}`,
          })
        ).json()) as { api_token: string }
        await send(service.url, callsCarrying(adminKey, project.api_token))
        await service.waitFor(lastLine, 'the last request line')
      } finally {
        await service.kill('SIGTERM')
      }
      outputs.push(service.output())
    }
    const shown = outputs[0]!.split('\n').filter((l) => l.includes(adminKey))
    expect(shown).to.have.length(1)
    expect(JSON.parse(shown[0]!)).to.include({
      adminApiKey: adminKey,
      msg: 'generated an admin API key (shown once; it is kept in the data folder)',
    })
    expect(occurrences(outputs[0]!, adminKey)).to.equal(1)
    expect(occurrences(outputs[1]!, adminKey)).to.equal(0)
  })
})
