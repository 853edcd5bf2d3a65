/**
 * kill -9 of the service (with the embedded store in it) at random moments under capture load,
 * each followed at once (0 ms, as a supervisor without back-off does) by a restart on the same
 * data folder while the killed process is still an unreaped zombie holding its PID: every restart
 * starts, every acknowledged event is stored exactly once, every acknowledged person update is
 * kept, and the store opens and reads. RELIABILITY_CRASHES sets the number of kills (3 by default;
 * `npm run test:long` runs 20).
 */
import { expect } from 'chai'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongo } from '../../core/storage/embedded/index.ts'
import { startUnreapedService } from '../helpers/process.ts'
import { CaptureLoad } from './helpers/load.ts'
import { checkStore } from './helpers/verify.ts'

const CRASHES = Number(process.env.RELIABILITY_CRASHES ?? 3)
const ADMIN_KEY = 'hra_crash-test-admin-key-0123'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** The state letter of /proc/<pid>/stat (Z: a zombie), or undefined where there is no /proc. */
const stateOf = (pid: number) =>
  existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] : undefined

describe('kill -9 of the service under load (embedded store)', function () {
  this.timeout(60_000 + CRASHES * 20_000)
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-crash-'))
  after(() => rmSync(dataDir, { recursive: true, force: true }))

  it(`loses and duplicates nothing acknowledged across ${CRASHES} crashes`, async () => {
    const env = { DATA_DIR: dataDir, ADMIN_API_KEY: ADMIN_KEY, MONGODB_URL: '', LOG_LEVEL: 'info' }
    let service = await startUnreapedService(env)
    const created = await fetch(`${service.url}/api/projects`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
      body: '{"name":"crash"}',
    })
    const project = (await created.json()) as { id: number; api_token: string }
    const load = new CaptureLoad({ token: project.api_token, concurrency: 8 })
    const ackedPerCycle: number[] = []
    const restartStates: Array<string | undefined> = []

    for (let crash = 1; crash <= CRASHES; crash++) {
      const before = load.acked.size
      let killed!: () => void
      const stop = new Promise<void>((resolve) => (killed = resolve))
      const running = load.run(service.url, stop)
      await sleep(500 + Math.random() * 1500)
      const dead = service
      process.kill(dead.pid, 'SIGKILL')
      const restarted = startUnreapedService(env)
      killed()
      await running
      ackedPerCycle.push(load.acked.size - before)
      service = await restarted
      // What the old PID-file lock tripped over: the killed process, dead but not reaped.
      restartStates.push(stateOf(dead.pid))
      expect(await dead.reap()).to.equal(128 + 9)
      await load.retryPending(service.url)
    }
    await load.run(service.url, sleep(500))
    await load.retryPending(service.url)
    process.kill(service.pid, 'SIGTERM')
    expect(await service.reap()).to.equal(0)

    // The store, opened on its own after the last clean shutdown, must hold exactly what was acknowledged.
    const store = await startEmbeddedMongo({ dataDir: path.join(dataDir, 'mongo') })
    const client = await MongoClient.connect(store.url)
    try {
      const check = await checkStore(client.db('hedgerow'), project.id, load)
      console.log(
        `      crashes: ${CRASHES}, each restarted at once next to its zombie, requests: ${load.requests}, events acknowledged: ${load.acked.size} (per cycle ${ackedPerCycle.join(', ')}), stored: ${check.events}, person keys checked: ${check.personKeysChecked}, statuses: ${JSON.stringify(Object.fromEntries(load.statuses))}`,
      )
      expect(
        ackedPerCycle.every((n) => n > 0),
        'every cycle acknowledged events before its kill',
      ).to.equal(true)
      if (existsSync('/proc'))
        expect(restartStates, 'each restart started while the killed process was a zombie').to.deep.equal(
          restartStates.map(() => 'Z'),
        )
      expect(check.missingEvents, 'acknowledged events not stored').to.deep.equal([])
      expect(check.duplicates, 'events stored twice').to.equal(0)
      expect(check.missingPersonKeys, 'acknowledged person updates lost').to.deep.equal([])
      expect(check.events).to.equal(load.acked.size)
      expect(check.personKeysChecked).to.be.greaterThan(0)
    } finally {
      await client.close()
      await store.close()
    }
  })
})
