/**
 * The path a third party takes: the template sink package is packed with `npm pack`, installed by
 * npm into a scratch application next to the service, enabled in a config file by package name
 * (and, separately, by a ./relative/path), and fed events over HTTP. The package's own tests run
 * under plain node, importing `hedgerow/testing` and type-checking against `hedgerow/plugin-api`.
 */
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { loadConfig } from '../../core/config.ts'
import { API_VERSION } from '../../core/plugin-api.ts'
import { ROOT_DIR, startTestService } from '../helpers/service.ts'
import { uuidv7 } from '../../core/capture/uuid.ts'

const run = promisify(execFile)
const TEMPLATE = path.join(ROOT_DIR, 'plugins', '.template')
const PACKAGE = 'hedgerow-plugin-sink-template'
/** The child processes run plain node: no TypeScript loader inherited from this test process. */
const plainEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_OPTIONS'))

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(value, null, 2))
}

function readLines(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe('third-party sink packages', function () {
  this.timeout(60_000)
  let work: string
  let app: string
  let tarball: string

  before(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-third-party-'))
    const packed = await run('npm', ['pack', TEMPLATE, '--pack-destination', work, '--json', '--loglevel=error'])
    tarball = path.join(work, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0].filename)
    app = path.join(work, 'app')
    writeJson(path.join(app, 'package.json'), { name: 'scratch-app', private: true })
    // A local tarball installs offline; its one dependency (typebox) comes from npm's cache.
    await run(
      'npm',
      ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'],
      { cwd: app },
    )
    // The service as the app's own dependency, the way `npm install hedgerow` would place it.
    symlinkSync(ROOT_DIR, path.join(app, 'node_modules', 'hedgerow'), 'dir')
  })
  after(() => rmSync(work, { recursive: true, force: true }))

  async function sendAndRead(plugins: unknown, configDir: string, file: string, expectedSource: RegExp): Promise<void> {
    const t = await startTestService({ plugins }, { configDir, rootDir: app })
    try {
      const loaded = t.service.plugins.find((p) => p.tapped.includes('sink'))
      expect(loaded?.source).to.match(expectedSource)
      const batch = [1, 2, 3].map((n) => ({
        event: `third-party ${n}`,
        distinct_id: 'tp-user',
        uuid: uuidv7(),
        properties: { $browser: 'Firefox', n },
      }))
      const response = await fetch(`${t.url}/batch/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ api_key: t.project.api_token, batch }),
      })
      expect(response.status).to.equal(200)
      // required: the 200 came after the sink's fsync, so the lines are already there
      const lines = readLines(file)
      expect(lines.map((l) => l.uuid)).to.deep.equal(batch.map((e) => e.uuid))
      expect(lines[1]).to.deep.include({ event: 'third-party 2', distinct_id: 'tp-user', project_id: t.project.id })
      expect(lines[1].properties).to.deep.include({ $browser: 'Firefox', n: 2 })
    } finally {
      await t.close()
    }
  }

  it('loads a packed package installed by npm, named in a config file, and stores events sent over HTTP', async () => {
    writeJson(path.join(app, 'config', 'default.json'), {
      plugins: [{ plugin: 'validate' }, { plugin: PACKAGE, required: true, options: { file: '../events.jsonl' } }],
    })
    const { config, configDir } = loadConfig(app, {})
    await sendAndRead(
      config.plugins,
      configDir,
      path.join(app, 'events.jsonl'),
      /^npm hedgerow-plugin-sink-template@0\.1\.0$/,
    )
  })

  it('loads the same package from a ./relative/path named in a config file', async () => {
    const folder = path.join(app, 'local-plugins', 'my-sink')
    mkdirSync(folder, { recursive: true })
    await run('tar', ['-xzf', tarball, '-C', folder, '--strip-components=1'])
    const configFile = path.join(app, 'hedgerow.local.json')
    writeJson(configFile, {
      plugins: [
        { plugin: 'validate' },
        { plugin: './local-plugins/my-sink', id: 'my-sink', required: true, options: { file: './local-events.jsonl' } },
      ],
    })
    const { config, configDir } = loadConfig(app, { CONFIG_FILE: configFile })
    expect(configDir).to.equal(app)
    await sendAndRead(
      config.plugins,
      configDir,
      path.join(app, 'local-events.jsonl'),
      /^path .*local-plugins\/my-sink\/src\/index\.js$/,
    )
  })

  it('imports hedgerow/plugin-api from the installed package under plain node', async () => {
    const script = `
      const api = await import('hedgerow/plugin-api')
      const plugin = (await import('${PACKAGE}')).default
      const dropped = api.drop('why')
      console.log(JSON.stringify({ apiVersion: api.API_VERSION, pluginApiVersion: plugin.apiVersion, same: api.definePlugin(plugin) === plugin, dropped: api.isDropped(dropped) }))`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app, env: plainEnv() })
    expect(JSON.parse(stdout)).to.deep.equal({
      apiVersion: API_VERSION,
      pluginApiVersion: API_VERSION,
      same: true,
      dropped: true,
    })
  })

  it("runs the template's own tests (the conformance suite from hedgerow/testing) and type check under plain node", async () => {
    // The author's checkout after `npm install`: the template's files plus its dependencies.
    const dev = path.join(work, 'dev')
    cpSync(TEMPLATE, dev, { recursive: true, filter: (source) => !source.includes(`${path.sep}node_modules`) })
    for (const [name, target] of [
      ['hedgerow', ROOT_DIR],
      ['typebox', 'node_modules/typebox'],
      ['@types/node', 'node_modules/@types/node'],
      ['@types/mocha', 'node_modules/@types/mocha'],
    ]) {
      mkdirSync(path.dirname(path.join(dev, 'node_modules', name)), { recursive: true })
      symlinkSync(path.resolve(ROOT_DIR, target), path.join(dev, 'node_modules', name), 'dir')
    }
    const mocha = path.join(ROOT_DIR, 'node_modules', 'mocha', 'bin', 'mocha.js')
    const tsc = path.join(ROOT_DIR, 'node_modules', 'typescript', 'bin', 'tsc')
    const [tests] = await Promise.all([
      run(process.execPath, [mocha, '--reporter', 'dot', 'test/**/*.test.js'], { cwd: dev, env: plainEnv() }).catch(
        (error: { stdout: string; stderr: string }) => {
          throw new Error(`the template's tests failed:\n${error.stdout}\n${error.stderr}`)
        },
      ),
      run(process.execPath, [tsc, '-p', dev], { env: plainEnv() }).catch((error: { stdout: string }) => {
        throw new Error(`the template does not type-check against hedgerow/plugin-api:\n${error.stdout}`)
      }),
    ])
    expect(tests.stdout)
      .to.match(/\d+ passing/)
      .and.not.match(/failing|pending/)
  })
})
