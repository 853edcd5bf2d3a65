/**
 * Regenerates `plugin-api.js` and `plugin-api.d.ts` here from `core/plugin-api.ts`, the files the
 * package's `hedgerow/plugin-api` export points at, so a plugin imports the contract under plain
 * node without a TypeScript loader. They are committed; `test/conformance/plugin-sdk.test.ts`
 * fails when they are stale. Run: `npm run build:plugin-sdk`.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const ROOT = path.resolve(import.meta.dirname, '..')
const BANNER = '// Generated from core/plugin-api.ts by `npm run build:plugin-sdk`; do not edit.\n'

/** The two generated files, by name, as they should be committed. */
export function generatePluginApi(): Record<string, string> {
  const out = mkdtempSync(path.join(os.tmpdir(), 'hedgerow-plugin-sdk-'))
  try {
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    const flags = [
      '--ignoreConfig',
      '--declaration',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2023',
      '--skipLibCheck',
      '--types',
      'node',
    ]
    execFileSync(process.execPath, [tsc, path.join(ROOT, 'core', 'plugin-api.ts'), ...flags, '--outDir', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    return Object.fromEntries(
      ['plugin-api.js', 'plugin-api.d.ts'].map((name) => [name, BANNER + readFileSync(path.join(out, name), 'utf8')]),
    )
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  for (const [name, text] of Object.entries(generatePluginApi()))
    writeFileSync(path.join(import.meta.dirname, name), text)
}
