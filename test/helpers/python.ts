/**
 * A Python virtualenv with the posthog-python pinned in test/fixtures/posthog-python, made on first
 * use and kept in the temporary folder (keyed by the requirements, so a new pin makes a new one).
 * Answers why it could not when python3, venv or the package index is missing.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const POSTHOG_PYTHON_DIR = path.resolve(import.meta.dirname, '../fixtures/posthog-python')
const REQUIREMENTS = path.join(POSTHOG_PYTHON_DIR, 'requirements.txt')

export type PythonEnv = { python: string } | { skipped: string }

function run(command: string, args: string[], timeoutMs: number): { ok: boolean; output: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: timeoutMs })
  return {
    ok: result.status === 0,
    output: `${result.stderr ?? ''}${result.stdout ?? ''}${result.error?.message ?? ''}`.trim(),
  }
}

let made: PythonEnv | undefined

export function posthogPython(): PythonEnv {
  if (made) return made
  const key = createHash('sha256').update(readFileSync(REQUIREMENTS)).digest('hex').slice(0, 12)
  const dir = path.join(os.tmpdir(), `hedgerow-posthog-python-${key}`)
  const python = path.join(dir, 'bin', 'python')
  const ready = path.join(dir, '.installed')
  if (existsSync(ready)) return (made = { python })
  if (!run('python3', ['--version'], 10_000).ok)
    return (made = { skipped: 'python3 is not installed (apt-get install -y python3 python3-venv)' })
  rmSync(dir, { recursive: true, force: true })
  const venv = run('python3', ['-m', 'venv', dir], 60_000)
  if (!venv.ok)
    return (made = {
      skipped: `python3 -m venv is not available (apt-get install -y python3-venv): ${venv.output.split('\n').pop()}`,
    })
  const install = run(
    path.join(dir, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', '-r', REQUIREMENTS],
    180_000,
  )
  if (!install.ok)
    return (made = {
      skipped: `pip could not install ${REQUIREMENTS}: ${install.output.split('\n').slice(-2).join(' ')}`,
    })
  writeFileSync(ready, new Date().toISOString())
  return (made = { python })
}
