/**
 * `npm start` runs the compiled service: core/launch.js compiles dist/ when it is missing or older
 * than a source, then runs the entry from dist/ under plain node (no TypeScript loader). Run on a
 * copy of the checkout in a temporary folder, so the real dist/ is left alone.
 */
import { spawn, spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect } from 'chai'
import { ROOT_DIR } from '../helpers/service.ts'

const COPIED = ['core', 'plugins', 'config', 'package.json', 'tsconfig.json', 'tsconfig.build.json']
const COMPILING = 'hedgerow: compiling dist/'

describe('core/launch.js (npm start from dist/)', function () {
  // A build under load (several test suites sharing two cores) can take a minute.
  this.timeout(240_000)
  let root: string

  before(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-launch-'))
    for (const entry of COPIED) cpSync(path.join(ROOT_DIR, entry), path.join(root, entry), { recursive: true })
    symlinkSync(path.join(ROOT_DIR, 'node_modules'), path.join(root, 'node_modules'), 'dir')
  })
  after(() => rmSync(root, { recursive: true, force: true }))

  /** `npm run cli -- help` as the launcher runs it: its output and whether it compiled first. */
  function cli(): { status: number | null; stdout: string; stderr: string } {
    const run = spawnSync(process.execPath, ['core/launch.js', 'core/cli', 'help'], { cwd: root, encoding: 'utf8' })
    return { status: run.status, stdout: run.stdout, stderr: run.stderr }
  }

  it('compiles dist/ on first start and serves /_readiness and the console from it', async () => {
    const data = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-launch-data-'))
    const child = spawn(process.execPath, ['core/launch.js', 'core/main'], {
      cwd: root,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: data, LOG_FORMAT: 'json', WORKERS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk))
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', () => {
          const listening = /"url":"(http:[^"]+)".*"msg":"hedgerow is listening"/.exec(output)
          if (listening) resolve(listening[1]!)
        })
        child.once('exit', (code) => reject(new Error(`the service exited (${code}):\n${output}`)))
      })
      expect(output).to.include(COMPILING)
      const ready = await fetch(`${url}/_readiness`)
      expect(ready.status).to.equal(200)
      expect(await ready.json()).to.deep.include({ status: 'ready' })
      // Ready means the embedded store answered: its worker thread loaded the compiled host under plain node.
      // The console's page comes from dist/ too: the build copies the files plugins read beside their code.
      const consolePage = await fetch(`${url}/console/`)
      expect([consolePage.status, consolePage.headers.get('content-type')]).to.deep.equal([
        200,
        'text/html; charset=utf-8',
      ])
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('close', resolve))
      rmSync(data, { recursive: true, force: true })
    }
  })

  it('runs a fresh dist/ without compiling', () => {
    const fresh = cli()
    expect(fresh.status, fresh.stderr).to.equal(0)
    expect(fresh.stdout).to.include('commands:')
    expect(fresh.stderr).to.not.include(COMPILING)
  })

  it('compiles again once a source is newer, and refuses to run when it does not compile', () => {
    const file = path.join(root, 'core/warnings.ts')
    const source = readFileSync(file, 'utf8')
    try {
      writeFileSync(file, `${source}\nexport const broken: number = 'not a number'\n`)
      const broken = cli()
      expect(broken.stderr).to.include(COMPILING)
      expect(broken.stderr).to.include('compiling dist/ failed').and.include('error TS2322')
      expect(broken.status).to.equal(1)
      expect(broken.stdout).to.equal('')
      expect(existsSync(path.join(root, 'dist/.built'))).to.equal(false)
    } finally {
      writeFileSync(file, source)
    }
  })

  it('says what to do, instead of running stale code, when dist/ is stale and TypeScript is not installed', () => {
    // node_modules as after `npm prune --omit=dev`: every package but the compiler
    const modules = path.join(root, 'node_modules')
    rmSync(modules)
    mkdirSync(modules)
    for (const name of readdirSync(path.join(ROOT_DIR, 'node_modules')))
      if (name !== 'typescript') symlinkSync(path.join(ROOT_DIR, 'node_modules', name), path.join(modules, name))
    const now = new Date()
    utimesSync(path.join(root, 'core/main.ts'), now, now)
    const run = cli()
    expect(run.status).to.equal(1)
    expect(run.stderr).to.include('TypeScript is not installed to compile it')
    expect(run.stdout).to.equal('')
  })
})
