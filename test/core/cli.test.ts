/** The operator CLI as a child process, as `npm run cli` runs it but from the sources (tsx core/cli.ts). */
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ROOT_DIR } from '../helpers/service.ts'
import { testDbName, testMongoUrl } from '../helpers/mongo.ts'

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/cli.ts', ...args], {
    cwd: ROOT_DIR,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

const COMMAND_LINES = [
  /^ {2}projects create <name> \[--timezone <zone>\] +create a project/m,
  /^ {2}projects list +print every project/m,
  /^ {2}admin-key +print the admin API key/m,
  /^ {2}help +print this help/m,
]

describe('cli (npm run cli)', function () {
  this.timeout(60_000)

  it('lists every command with a line each on --help, -h and help, and exits 0, even when the config is broken', async () => {
    const runs = await Promise.all([
      cli(['--help']),
      cli(['-h']),
      cli(['help'], { CONFIG_FILE: '/nonexistent/config.json' }),
    ])
    for (const run of runs) {
      expect(run.code, run.stderr).to.equal(0)
      expect(run.stdout).to.match(/^usage: npm run cli -- <command>$/m)
      for (const line of COMMAND_LINES) expect(run.stdout).to.match(line)
      expect(run.stdout.match(/^ {2}\S/gm)).to.have.length(COMMAND_LINES.length)
    }
  })

  it('prints the help and exits non-zero on an unknown command or none', async () => {
    const [unknown, none, partial] = await Promise.all([cli(['frobnicate', '--now']), cli([]), cli(['projects'])])
    expect(unknown.code).to.equal(2)
    expect(unknown.stderr).to.match(/^unknown command: frobnicate --now$/m)
    expect(none.code).to.equal(2)
    expect(none.stderr).to.match(/^no command given$/m)
    expect(partial.code).to.equal(2)
    for (const run of [unknown, none, partial]) {
      expect(run.stdout).to.equal('')
      for (const line of COMMAND_LINES) expect(run.stderr).to.match(line)
    }
  })

  it('creates and lists projects in the configured database, and prints the admin key', async () => {
    const env = {
      MONGODB_URL: await testMongoUrl(),
      MONGODB_DB: testDbName('cli'),
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'hedgerow-cli-')),
      ADMIN_API_KEY: 'cli-test-admin-key-0123',
    }
    const [created, badZone, key] = await Promise.all([
      cli(['projects', 'create', 'Shop', '--timezone', 'Europe/Paris'], env),
      cli(['projects', 'create', 'X', '--timezone', 'Mars/Olympus'], env),
      cli(['admin-key'], env),
    ])
    expect(created.code, created.stderr).to.equal(0)
    const project = JSON.parse(created.stdout) as Record<string, unknown>
    expect(project).to.include({ id: 1, name: 'Shop', timezone: 'Europe/Paris' })
    expect([badZone.code, badZone.stderr.trim()]).to.deep.equal([2, 'not an IANA time zone: Mars/Olympus'])
    expect([key.code, key.stdout]).to.deep.equal([0, 'cli-test-admin-key-0123\n'])
    const listed = await cli(['projects', 'list'], env)
    expect(listed.code, listed.stderr).to.equal(0)
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).to.deep.equal([project])
  })
})
