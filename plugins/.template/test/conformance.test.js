// The service's sink conformance suite, run against this plugin (see hedgerow's README).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sinkConformance, toStoredEvent } from 'hedgerow/testing'
import plugin from '../src/index.js'

const dir = mkdtempSync(path.join(os.tmpdir(), 'sink-template-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let instances = 0

sinkConformance({
  plugin,
  options: () => ({ file: path.join(dir, `events-${++instances}.jsonl`) }),
  invalidOptions: [{}, { file: '' }, { file: 42 }],
  async read({ file }) {
    if (!existsSync(file)) return []
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => toStoredEvent(JSON.parse(line)))
  },
  // A folder where the file was: every later append fails.
  fail({ file }) {
    rmSync(file)
    mkdirSync(file)
  },
})
