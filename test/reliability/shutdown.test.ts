/**
 * SIGTERM while the database has stopped answering: the service as `npm start` runs it, against
 * the embedded database as its own process, which is then frozen with SIGSTOP (its port still
 * accepts connections, nothing answers). With requests in flight, SIGTERM must end the process
 * within `server.shutdownTimeoutMs` (plus the time a process takes to start exiting), with a
 * non-zero code and a log line saying what it was still waiting for.
 */
import { expect } from 'chai'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freePort, startMongoProcess, startServiceProcess } from '../helpers/process.ts'
import type { Child } from '../helpers/process.ts'

const SHUTDOWN_TIMEOUT_MS = 3_000
/** Node's exit after the deadline, plus a loaded machine's scheduling: generous on purpose. */
const EXIT_MARGIN_MS = 3_000
const ADMIN_KEY = 'shutdown-test-admin-key-0123'

describe('shutdown while the database does not answer', function () {
  this.timeout(90_000)
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-shutdown-'))
  let mongo: (Child & { url: string }) | undefined
  let service: (Child & { url: string }) | undefined

  after(async () => {
    if (mongo && mongo.process.exitCode === null) mongo.process.kill('SIGCONT')
    await service?.kill('SIGKILL')
    await mongo?.kill('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('exits within server.shutdownTimeoutMs with code 1 and says what it was waiting for', async () => {
    mongo = await startMongoProcess(await freePort(), path.join(dataDir, 'mongo'))
    const config = path.join(dataDir, 'config.json')
    // Steps and sinks would give up after stepTimeoutMs: make that longer than the shutdown budget,
    // so the requests in flight are still waiting when the budget runs out.
    writeFileSync(
      config,
      JSON.stringify({ server: { shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS }, pipeline: { stepTimeoutMs: 60_000 } }),
    )
    service = await startServiceProcess({
      CONFIG_FILE: config,
      DATA_DIR: dataDir,
      MONGODB_URL: mongo.url,
      ADMIN_API_KEY: ADMIN_KEY,
    })
    const created = await fetch(`${service.url}/api/projects`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
      body: '{"name":"p"}',
    })
    const { api_token } = (await created.json()) as { api_token: string }
    const warm = await fetch(`${service.url}/i/v0/e/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: api_token, event: 'warm', distinct_id: 'd' }),
    })
    expect(warm.status).to.equal(200)

    mongo.process.kill('SIGSTOP')
    const inFlight = Array.from({ length: 20 }, (_, i) =>
      fetch(`${service!.url}/batch/`, {
        method: 'POST',
        body: JSON.stringify({
          api_key: api_token,
          batch: [{ event: 'load', distinct_id: `u${i}`, properties: { $set: { n: i } } }],
        }),
      }).then(
        (response) => response.status,
        () => 'connection closed',
      ),
    )
    await new Promise((resolve) => setTimeout(resolve, 500))
    const signalled = performance.now()
    service.process.kill('SIGTERM')
    const code = await service.exited
    const tookMs = performance.now() - signalled
    const why = service.lines.find((line) => line.msg === 'shutdown failed')
    const reason = String((why?.err as { message?: string } | undefined)?.message)
    console.log(
      `      shutdown with the database frozen: exit code ${code} after ${Math.round(tookMs)} ms (budget ${SHUTDOWN_TIMEOUT_MS} ms): ${reason}`,
    )
    expect(tookMs).to.be.lessThan(SHUTDOWN_TIMEOUT_MS + EXIT_MARGIN_MS)
    expect(code).to.equal(1)
    expect(why, service.output().slice(-2000)).to.not.equal(undefined)
    expect(reason).to.match(/within 3000 ms \(server.shutdownTimeoutMs\): .+ was still pending/)
    const statuses = await Promise.all(inFlight)
    expect(
      statuses.filter((status) => status === 200),
      'acknowledged while the database was frozen',
    ).to.deep.equal([])
  })
})
