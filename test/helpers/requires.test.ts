/**
 * The skip-or-fail rule for suites that need software from outside npm, seen as a user sees it:
 * mocha run as a child process on a fixture file, with the tools made present or missing through
 * NATS_SERVER and CHROMIUM_PATH (node itself stands in for a present tool: `node --version` exits 0).
 */
import { expect } from 'chai'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
const ROOT_DIR = path.resolve(import.meta.dirname, '../..')

const FIXTURE = 'test/fixtures/requires/tools.fixture.ts'
const MOCHA = path.join(ROOT_DIR, 'node_modules/mocha/bin/mocha.js')

function mocha(
  env: Record<string, string>,
  args: string[] = [],
): { status: number | null; stdout: string; stderr: string; output: string; lastLine: string } {
  const { HEDGEROW_TEST_REQUIRE_ALL: _, ...inherited } = process.env
  const run = spawnSync(process.execPath, [MOCHA, '--no-color', ...args, FIXTURE], {
    cwd: ROOT_DIR,
    env: { ...inherited, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return {
    status: run.status,
    stdout: run.stdout,
    stderr: run.stderr,
    output: run.stdout + run.stderr,
    lastLine: run.stdout.trimEnd().split('\n').at(-1) ?? '',
  }
}

describe('requireTool (test/helpers/requires.ts)', function () {
  this.timeout(120_000)
  const missing = { NATS_SERVER: '/nonexistent/nats-server', CHROMIUM_PATH: '/nonexistent/chromium' }

  it('skips the suites whose tool is missing, with one line each naming the command that enables it, and counts them at the end', () => {
    const run = mocha(missing)
    expect(run.status, run.output).to.equal(0)
    expect(run.output).to.include(
      'skipped "needs nats-server" (2 tests): no runnable nats-server at /nonexistent/nats-server; to run it: apt-get install -y nats-server',
    )
    expect(run.output).to.include(
      'skipped "needs chromium" (2 tests): no Chromium at /nonexistent/chromium; to run it: apt-get install -y chromium',
    )
    expect(run.output.match(/^skipped "/gm)).to.have.length(2)
    expect(run.output).to.include('4 tests in 2 suites skipped because nats-server and chromium are missing')
    expect(run.output, 'the later before hooks of a skipped suite do not run').to.not.include(
      'the suite before hook ran',
    )
    expect(run.lastLine).to.equal('mocha: 1 passed, 0 failed, 4 skipped')
  })

  it('fails those suites instead under HEDGEROW_TEST_REQUIRE_ALL=1, as .ci/run sets it', () => {
    const run = mocha({ ...missing, HEDGEROW_TEST_REQUIRE_ALL: '1' })
    expect(run.status, run.output).to.not.equal(0)
    expect(run.output).to.include(
      'HEDGEROW_TEST_REQUIRE_ALL=1 forbids skipping "needs nats-server": apt-get install -y nats-server',
    )
    expect(run.output).to.include('HEDGEROW_TEST_REQUIRE_ALL=1 forbids skipping "needs chromium"')
    expect(run.output).to.not.match(/^skipped "/m)
  })

  it('leaves stdout to a machine-readable reporter and closes on stderr instead', () => {
    const run = mocha(missing, ['--reporter', 'json'])
    expect(run.status, run.output).to.equal(0)
    const report = JSON.parse(run.stdout) as { stats: { passes: number; pending: number } }
    expect(report.stats).to.include({ passes: 1, pending: 4 })
    expect(run.stderr).to.include('4 tests in 2 suites skipped because nats-server and chromium are missing')
    expect(run.stderr.trimEnd().split('\n').at(-1)).to.equal('mocha: 1 passed, 0 failed, 4 skipped')
  })

  it('runs every suite when the tools are there, and reports no skip', () => {
    const run = mocha({
      NATS_SERVER: process.execPath,
      CHROMIUM_PATH: process.execPath,
      HEDGEROW_TEST_REQUIRE_ALL: '1',
    })
    expect(run.status, run.output).to.equal(0)
    expect(run.output).to.include('the suite before hook ran')
    expect(run.output).to.not.match(/^skipped "|because .* missing/m)
    expect(run.lastLine).to.equal('mocha: 5 passed, 0 failed, 0 skipped')
  })
})
