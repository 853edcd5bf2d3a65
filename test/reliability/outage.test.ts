/**
 * The database as its own process (`npm run mongo-embedded`), killed with SIGKILL in the middle of
 * posthog-node load and started again on the same port and folder: capture answers 503 with a
 * JSON error within the request timeout, readiness says not ready, flags that need no database
 * still answer, and after the restart posthog-node's own retries store every event exactly once,
 * with no restart of the service.
 */
import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PostHog } from 'posthog-node'
import { startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { defaultPlugins } from './helpers/default-plugins.ts'
import { freePort, startMongoProcess } from '../helpers/process.ts'
import type { Child } from '../helpers/process.ts'
import { counterValue } from '../../core/metrics.ts'

const REQUEST_TIMEOUT_MS = 8_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function waitUntil(test: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<number> {
  const started = Date.now()
  while (!(await test())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
  return Date.now() - started
}

describe('database outage (embedded server as its own process, killed and restarted)', function () {
  this.timeout(120_000)
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-outage-'))
  let mongo: Child & { url: string }
  let port: number
  let t: TestService

  before(async () => {
    port = await freePort()
    mongo = await startMongoProcess(port, dataDir)
    t = await startTestService({
      plugins: defaultPlugins(),
      server: { requestTimeoutMs: REQUEST_TIMEOUT_MS },
      pipeline: { stepTimeoutMs: 3_000 },
      storage: { mongodbUrl: mongo.url },
    })
    const flags = [
      { id: 1, key: 'everyone', active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
      {
        id: 2,
        key: 'needs-person',
        active: true,
        filters: {
          groups: [
            { properties: [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }], rollout_percentage: 100 },
          ],
        },
      },
    ]
    expect((await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, { flags })).status).to.equal(200)
  })
  after(async () => {
    await t?.close().catch(() => undefined)
    await mongo?.kill('SIGTERM')
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('answers 503 and not-ready while the database is down, recovers, and posthog-node stores every event once', async () => {
    const client = new PostHog(t.project.api_token, {
      host: t.url,
      flushAt: 5,
      flushInterval: 100,
      fetchRetryCount: 30,
      fetchRetryDelay: 500,
      requestTimeout: REQUEST_TIMEOUT_MS,
    })
    const TOTAL = 300
    let sent = 0
    const serverErrorsBefore = counterValue('hedgerow_http_requests_total', { status: '500' })
    const producing = (async () => {
      for (; sent < TOTAL; sent++) {
        client.capture({
          distinctId: `u${sent % 7}`,
          event: 'outage-load',
          properties: { n: sent, $set: { [`k${sent}`]: sent } },
        })
        await sleep(20)
      }
    })()
    await sleep(1_500)
    await mongo.kill('SIGKILL')

    const startedAt = performance.now()
    const capture = await fetch(`${t.url}/i/v0/e/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: t.project.api_token, event: 'direct', distinct_id: 'd' }),
    })
    const captureMs = performance.now() - startedAt
    expect(capture.status).to.equal(503)
    expect(((await capture.json()) as { type: string }).type).to.equal('server_error')
    expect(captureMs).to.be.lessThan(REQUEST_TIMEOUT_MS)

    const readiness = await fetch(`${t.url}/_readiness`)
    expect(readiness.status).to.equal(503)
    expect(await readiness.json()).to.deep.include({ status: 'not_ready', database: 'unreachable' })

    const flagsResponse = await fetch(`${t.url}/flags/?v=2`, {
      method: 'POST',
      body: JSON.stringify({ api_key: t.project.api_token, distinct_id: 'u1' }),
    })
    expect(flagsResponse.status).to.equal(200)
    const flags = (await flagsResponse.json()) as {
      errorsWhileComputingFlags: boolean
      flags: Record<string, { enabled: boolean; failed?: boolean }>
    }
    expect(flags.errorsWhileComputingFlags).to.equal(true)
    expect(flags.flags.everyone!.enabled).to.equal(true)
    expect(flags.flags['needs-person']!.failed).to.equal(true)

    await sleep(1_000)
    mongo = await startMongoProcess(port, dataDir)
    const recoveryMs = await waitUntil(
      async () => (await fetch(`${t.url}/_readiness`)).status === 200,
      'readiness after the restart',
    )
    await producing
    await client.shutdown(60_000)

    const events = t.service.storage.db.collection('events')
    const perUuid = await events
      .aggregate<{ n: number }>([
        { $match: { project_id: t.project.id, event: 'outage-load' } },
        { $group: { _id: '$uuid', n: { $sum: 1 } } },
      ])
      .toArray()
    const numbers = new Set(
      (await events.find({ project_id: t.project.id, event: 'outage-load' }).toArray()).map(
        (e) => (e.properties as { n: number }).n,
      ),
    )
    console.log(
      `      outage: capture 503 in ${Math.round(captureMs)} ms, ready again ${recoveryMs} ms after the restart, ${perUuid.length}/${TOTAL} events stored`,
    )
    expect(
      counterValue('hedgerow_http_requests_total', { status: '500' }) - serverErrorsBefore,
      'answers 500 during the outage',
    ).to.equal(0)
    expect(counterValue('hedgerow_http_requests_total', { status: '503' })).to.be.greaterThan(0)
    expect(numbers.size, 'events stored').to.equal(TOTAL)
    expect(perUuid.length).to.equal(TOTAL)
    expect(
      perUuid.filter((row) => row.n > 1),
      'events stored twice',
    ).to.deep.equal([])
  })
})
