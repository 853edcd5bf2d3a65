import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sinkConformance, toStoredEvent } from '../../conformance/index.ts'
import sinkNdjson from '../../../plugins/sink-ndjson/index.ts'
import type { PluginDefinition } from '../../../core/plugin-api.ts'
import { readDir } from './read.ts'

const root = mkdtempSync(path.join(os.tmpdir(), 'sink-ndjson-conformance-'))
after(() => rmSync(root, { recursive: true, force: true }))
let instances = 0

sinkConformance({
  plugin: sinkNdjson as PluginDefinition,
  // Small files and a small buffer, so rotation and the full-buffer failure happen within the suite.
  options: () => ({
    dir: path.join(root, `instance-${++instances}`),
    maxFileBytes: 16 * 1024,
    flushIntervalMs: 20,
    maxBufferBytes: 64 * 1024,
  }),
  invalidOptions: [{ prefix: '../escape' }, { maxFileBytes: 10 }, { rotateEveryMs: 'hourly' }, { dir: '' }],
  read: async ({ dir }) => readDir(dir).map(toStoredEvent),
  // A plain file where the folder was: the open file is gone, and a new one cannot be created.
  fail({ dir }) {
    rmSync(dir, { recursive: true, force: true })
    writeFileSync(dir, '')
  },
})
