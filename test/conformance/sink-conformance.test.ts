/**
 * The suite has teeth: run in a child mocha against a sink that keeps the contract and one sink
 * per way of breaking it, exactly the tests aimed at each broken sink fail.
 */
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'

const ROOT = path.resolve(import.meta.dirname, '../..')
const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'sinks.fixture.ts')

/** For each broken sink, the one test that must catch it (mocha --grep keeps the run short). */
const CAUGHT_BY: Record<string, string> = {
  'early-ack':
    'as a required sink has stored every event of a request exactly once and completely when the request answers 200',
  duplicator:
    'as a required sink has stored every event of a request exactly once and completely when the request answers 200',
  mutator: 'as a required sink does not modify the events it is handed',
  'leaky-teardown': 'as an optional sink has stored everything it acknowledged once the service has shut down',
  'swallows-errors':
    'when its destination fails as a required sink: the request answers 503 and the other sinks still get every event',
  'loose-schema': 'definition has an options schema that refuses an unknown key and every invalid value given',
  'taps-more': 'as a required sink taps the sink hook and nothing else',
}

interface MochaJson {
  stats: { passes: number; failures: number }
  passes: Array<{ fullTitle: string }>
  failures: Array<{ fullTitle: string }>
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

describe('sinkConformance', function () {
  this.timeout(60_000)

  it('passes a sink that keeps the contract and fails each broken sink on the test aimed at it', async () => {
    const grep = [
      'sink conformance: good ',
      ...Object.entries(CAUGHT_BY).map(([name, title]) => `sink conformance: ${name} ${title}`),
    ]
      .map(escape)
      .join('|')
    const child = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(ROOT, 'node_modules/mocha/bin/mocha.js'),
        '--reporter',
        'json',
        '--grep',
        grep,
        FIXTURE,
      ],
      { cwd: ROOT, maxBuffer: 16 << 20 },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }))
    const report = JSON.parse(child.stdout) as MochaJson
    const good = report.passes.filter((t) => t.fullTitle.startsWith('sink conformance: good '))
    expect(good, 'tests the good sink passed').to.have.length(9)
    expect(report.failures.map((t) => t.fullTitle).sort()).to.deep.equal(
      Object.entries(CAUGHT_BY)
        .map(([name, title]) => `sink conformance: ${name} ${title}`)
        .sort(),
    )
  })
})
