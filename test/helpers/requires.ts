/**
 * Suites that need software from outside npm (Debian's nats-server, a Chromium, Python for the real
 * posthog-python) run where it is
 * present and are skipped where it is not, so that `npm install && npm test` passes on a machine
 * with only Node and npm. Each skipped suite gets one line at the end of the run saying what was
 * skipped and the command that enables it, and a closing line counts the tests skipped that way.
 *
 * With HEDGEROW_TEST_REQUIRE_ALL=1 (set by .ci/run, which installs both) a missing tool fails the
 * suite instead: a broken install must not pass CI by skipping.
 *
 * Detection honours NATS_SERVER (the nats-server command, default `nats-server` on PATH) and
 * CHROMIUM_PATH (default /usr/bin/chromium), so a machine without them can be simulated:
 * `NATS_SERVER=/nonexistent CHROMIUM_PATH=/nonexistent npm test`.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { Runner, Suite } from 'mocha'
import { posthogPython } from './python.ts'

export const NATS_SERVER = process.env.NATS_SERVER ?? 'nats-server'
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

interface Tool {
  /** Why the tool counts as missing, or undefined when it is there. */
  missing(): string | undefined
  /** The command that makes it present. */
  enable: string
}

export const TOOLS = {
  'nats-server': {
    missing: () =>
      spawnSync(NATS_SERVER, ['--version']).status === 0
        ? undefined
        : `no runnable nats-server${NATS_SERVER === 'nats-server' ? ' on PATH' : ` at ${NATS_SERVER}`}`,
    enable: 'apt-get install -y nats-server',
  },
  chromium: {
    missing: () => (existsSync(CHROMIUM_PATH) ? undefined : `no Chromium at ${CHROMIUM_PATH}`),
    enable: 'apt-get install -y chromium (or point CHROMIUM_PATH at a Chromium)',
  },
  /** A virtualenv with the pinned posthog-python, made on first use (test/helpers/python.ts). */
  'posthog-python': {
    missing: () => {
      const env = posthogPython()
      return 'skipped' in env ? env.skipped : undefined
    },
    enable: 'apt-get install -y python3 python3-venv (and a package index pip can reach)',
  },
} satisfies Record<string, Tool>

export type ToolName = keyof typeof TOOLS

export const REQUIRE_ALL = process.env.HEDGEROW_TEST_REQUIRE_ALL === '1'

interface SkippedSuite {
  title: string
  tests: number
  tool: ToolName
  reason: string
}

const skipped: SkippedSuite[] = []
const presence = new Map<ToolName, string | undefined>()

/** Checked once per run: spawning nats-server for every suite would only repeat the answer. */
export function missingReason(tool: ToolName): string | undefined {
  if (!presence.has(tool)) presence.set(tool, TOOLS[tool].missing())
  return presence.get(tool)
}

/**
 * Call first inside a `describe` whose tests need `tool`: registers a `before` that skips the whole
 * suite (its later `before` hooks too) when the tool is missing, or fails it under REQUIRE_ALL.
 */
export function requireTool(tool: ToolName): void {
  before(function () {
    const reason = missingReason(tool)
    if (reason === undefined) return
    const suite = this.test?.parent as Suite
    if (REQUIRE_ALL)
      throw new Error(
        `${reason}, and HEDGEROW_TEST_REQUIRE_ALL=1 forbids skipping "${suite.fullTitle()}": ${TOOLS[tool].enable}`,
      )
    skipped.push({ title: suite.fullTitle(), tests: suite.total(), tool, reason })
    this.skip()
  })
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`

/** The per-suite lines and the count of tests skipped for a missing tool; empty when there were none. */
export function skipReport(): string[] {
  if (skipped.length === 0) return []
  const lines = skipped.map(
    (s) => `skipped "${s.title}" (${plural(s.tests, 'test')}): ${s.reason}; to run it: ${TOOLS[s.tool].enable}`,
  )
  const tests = skipped.reduce((sum, s) => sum + s.tests, 0)
  const tools = [...new Set(skipped.map((s) => s.tool))]
  lines.push(
    `${plural(tests, 'test')} in ${plural(skipped.length, 'suite')} skipped because ${tools.join(' and ')} ${tools.length > 1 ? 'are' : 'is'} missing (counted in "pending" above); .ci/run installs them and fails on such a skip`,
  )
  return lines
}

/** The reporter named on mocha's command line (the default is spec). */
function reporterName(argv = process.argv): string {
  const at = argv.findIndex((arg) => arg === '--reporter' || arg === '-R' || arg.startsWith('--reporter='))
  if (at < 0) return 'spec'
  return argv[at].startsWith('--reporter=') ? argv[at].slice('--reporter='.length) : (argv[at + 1] ?? 'spec')
}

/**
 * Mocha global teardown (this file is loaded with `require`): it runs after mocha's own summary, so
 * these lines close the output, the last one in the plain "N passed, N failed, N skipped" form.
 * Under another reporter than spec (json, for a program to read) they go to stderr instead, so
 * that stdout stays what that reporter wrote.
 */
export function mochaGlobalTeardown(this: Runner): void {
  const { passes = 0, failures = 0, pending = 0 } = this.stats ?? {}
  const text = ['', ...skipReport(), `mocha: ${passes} passed, ${failures} failed, ${pending} skipped`, ''].join('\n')
  ;(reporterName() === 'spec' ? process.stdout : process.stderr).write(text)
}
