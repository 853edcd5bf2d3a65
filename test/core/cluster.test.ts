/**
 * `npm start` with two workers, as a real process tree: both workers serve the port and reach the
 * primary's embedded database over its Unix socket, a flag definition change made through one
 * worker is seen by the other within a few seconds, and SIGTERM to the primary stops every worker.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { expect } from 'chai'
import { buildConfig } from '../../core/config.ts'
import { workerCount } from '../../core/cluster.ts'
import { tcpListeningPorts } from '../helpers/listening.ts'
import { ROOT_DIR } from '../helpers/service.ts'

const ADMIN_KEY = 'cluster-admin-key-0123456789'

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** One request on its own connection, so that the primary hands it to the next worker in turn. */
function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body)
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown>,
          }),
        )
      },
    )
    req.on('error', reject)
    req.end(data)
  })
}

function childPids(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : []
}

const alive = (pid: number) =>
  existsSync(`/proc/${pid}`) && !/State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, 'utf8'))

describe('core/cluster', () => {
  it('defaults to one worker in development and one per core in production', () => {
    expect(workerCount(buildConfig(), {})).to.equal(1)
    expect(workerCount(buildConfig(), { NODE_ENV: 'production' })).to.equal(os.availableParallelism())
    expect(workerCount(buildConfig({ server: { workers: 3 } }), { NODE_ENV: 'production' })).to.equal(3)
  })

  describe('npm start with two workers', function () {
    this.timeout(60_000)
    let primary: ChildProcess
    let url: string
    let port: number
    let dir: string
    let stderr = ''

    before(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-cluster-'))
      const configFile = path.join(dir, 'config.json')
      writeFileSync(
        configFile,
        JSON.stringify({
          plugins: [
            { plugin: 'validate' },
            { plugin: 'decide', options: { pollIntervalMs: 200 } },
            { plugin: 'sink-mongo', required: true },
          ],
        }),
      )
      port = await freePort()
      url = `http://127.0.0.1:${port}`
      primary = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts'], {
        cwd: ROOT_DIR,
        env: {
          ...process.env,
          WORKERS: '2',
          PORT: String(port),
          HOST: '127.0.0.1',
          CONFIG_FILE: configFile,
          MONGODB_URL: '',
          DATA_DIR: dir,
          ADMIN_API_KEY: ADMIN_KEY,
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      primary.stderr!.on('data', (c: Buffer) => (stderr += c.toString()))
      for (let i = 0; i < 300; i++) {
        const up = await fetch(`${url}/_health`).then(
          (r) => r.ok,
          () => false,
        )
        if (up && childPids(primary.pid!).length === 2) return
        if (primary.exitCode !== null) break
        await new Promise((r) => setTimeout(r, 100))
      }
      throw new Error(`the cluster did not start: ${stderr}`)
    })
    after(() => {
      if (primary.exitCode === null) primary.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    })

    it('runs two worker processes that serve the port and share the database', async () => {
      expect(childPids(primary.pid!)).to.have.length(2)
      // The database is the primary's, on the socket in the data folder; no TCP port but the service's.
      expect(statSync(path.join(dir, 'mongo', 'mongod.sock')).isSocket()).to.equal(true)
      expect(tcpListeningPorts(primary.pid!) ?? [port]).to.deep.equal([port])
      for (const worker of childPids(primary.pid!)) expect(tcpListeningPorts(worker) ?? []).to.deep.equal([])
      const created = await post(`${url}/api/projects`, { name: 'cluster' }, { Authorization: `Bearer ${ADMIN_KEY}` })
      expect(created.status).to.equal(201)
      for (let i = 0; i < 4; i++)
        expect(
          (await post(`${url}/i/v0/e/`, { api_key: created.body.api_token, event: 'e', distinct_id: `d${i}` })).status,
        ).to.equal(200)
    })

    it('shows a flag change made through one worker to the other within a few seconds', async () => {
      const project = await post(`${url}/api/projects`, { name: 'flags' }, { Authorization: `Bearer ${ADMIN_KEY}` })
      const token = String(project.body.api_token)
      const define = (active: boolean) =>
        fetch(`${url}/api/projects/${project.body.id}/flag_definitions`, {
          method: 'PUT',
          headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json', Connection: 'close' },
          body: JSON.stringify({
            flags: [{ id: 1, key: 'beta', active, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }],
          }),
        })
      expect((await define(true)).status).to.equal(200)
      const values = async () =>
        Promise.all(
          Array.from(
            { length: 6 },
            async () =>
              (
                (await post(`${url}/flags/?v=1`, { token, distinct_id: 'u1' })).body.featureFlags as Record<
                  string,
                  unknown
                >
              ).beta,
          ),
        )
      // both workers have loaded (and cached) the definitions before the change
      await new Promise((r) => setTimeout(r, 500))
      expect(await values()).to.deep.equal(Array(6).fill(true))
      expect((await define(false)).status).to.equal(200)
      const deadline = Date.now() + 3_000
      let seen = await values()
      while (seen.some((v) => v !== undefined) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100))
        seen = await values()
      }
      expect(seen, 'an inactive flag is absent on every worker').to.deep.equal(Array(6).fill(undefined))
    })

    it('stops every worker and exits 0 on SIGTERM to the primary', async () => {
      const workers = childPids(primary.pid!)
      const exited = new Promise<number | null>((resolve) => primary.once('exit', (code) => resolve(code)))
      primary.kill('SIGTERM')
      expect(await exited).to.equal(0)
      expect(workers.filter(alive), `workers still running: ${stderr}`).to.deep.equal([])
    })
  })
})
