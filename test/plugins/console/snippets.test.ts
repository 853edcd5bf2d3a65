/**
 * The set-up code the console offers to copy is code that works: the posthog-js snippet is the one
 * docs/browser.md documents (which the browser tests run in Chromium), and the posthog-node and
 * posthog-python snippets, run as pasted against a real service, send their event and read their
 * flag with local evaluation through the project's secret key.
 */
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { documentedSnippetLoader } from '../../browser/helpers/pages.ts'
import { posthogPython } from '../../helpers/python.ts'
import { requireTool } from '../../helpers/requires.ts'
import { ROOT_DIR, startTestService, storedEvents } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

interface Snippets {
  browserSnippet(origin: string, token: string): string
  nodeSnippet(origin: string, token: string): string
  pythonSnippet(origin: string, token: string): string
}
// a browser module without types: loaded as it is served
const snippets = (await import(
  pathToFileURL(path.join(ROOT_DIR, 'plugins/console/public/snippets.js')).href
)) as Snippets

/** Code lines without comments and indentation, to compare two copies of one snippet. */
const codeLines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('//'))

/** A folder inside the project (so that `import 'posthog-node'` resolves), git-ignored. */
const scratchDirs: string[] = []
function scratchDir(): string {
  const parent = path.join(ROOT_DIR, '.tmp')
  mkdirSync(parent, { recursive: true })
  scratchDirs.push(mkdtempSync(path.join(parent, 'console-snippet-')))
  return scratchDirs.at(-1)!
}

describe('console set-up snippets', function () {
  this.timeout(120_000)
  let t: TestService
  before(async () => {
    t = await startTestService({
      plugins: [{ plugin: 'validate' }, { plugin: 'decide' }, { plugin: 'sink-mongo', required: true }],
    })
    const created = await t.admin('POST', `/api/projects/${t.project.id}/feature_flags/`, {
      key: 'my-flag',
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    expect(created.status).to.equal(201)
  })
  after(async () => {
    for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true })
    await t?.close()
  })

  /** Runs a snippet (asynchronously: the service answering it runs in this process) and gives its last line. */
  const ran = async (command: string, args: string[]) => {
    const { stdout } = await promisify(execFile)(command, args, {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, HEDGEROW_SECRET_KEY: t.project.secret_api_token },
    })
    return stdout.trim().split('\n').pop()
  }
  const eventStored = async (event: string) =>
    (await storedEvents(t, `&event=${encodeURIComponent(event)}`)).filter((e) => e.distinct_id === 'user-1').length

  it('posthog-js: the snippet of docs/browser.md, initialised with this service and the project key', () => {
    const code = snippets.browserSnippet(t.url, t.project.api_token)
    expect(code.startsWith('<script>\n') && code.endsWith('\n</script>')).to.equal(true)
    const [loader, init] = [codeLines(code).slice(1, -2), codeLines(code).at(-2)]
    expect(loader).to.deep.equal(codeLines(documentedSnippetLoader()))
    expect(init).to.equal(
      `posthog.init(${JSON.stringify(t.project.api_token)}, { api_host: ${JSON.stringify(t.url)} })`,
    )
  })

  it('posthog-node: pasted into a module, it captures and reads the flag (secret key: local evaluation)', async () => {
    const file = path.join(scratchDir(), 'snippet.mjs')
    writeFileSync(file, `${snippets.nodeSnippet(t.url, t.project.api_token)}\nconsole.log(JSON.stringify(enabled))\n`)
    expect(await ran(process.execPath, [file])).to.equal('true')
    expect(await eventStored('signed up')).to.equal(1)
  })

  describe('posthog-python', () => {
    requireTool('posthog-python')
    it('pasted into a script, it captures and reads the flag (secret key: local evaluation)', async () => {
      const env = posthogPython()
      if ('skipped' in env) throw new Error(env.skipped)
      const file = path.join(scratchDir(), 'snippet.py')
      writeFileSync(file, `${snippets.pythonSnippet(t.url, t.project.api_token)}\nprint(enabled)\n`)
      expect(await ran(env.python, [file])).to.equal('True')
      expect(await eventStored('signed up')).to.equal(2)
    })
  })
})
