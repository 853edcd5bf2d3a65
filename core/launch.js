/**
 * `npm start`, `npm run worker`, `npm run cli`, `npm run mongo-embedded`: run an entry point of the
 * compiled service in `dist/`, compiling first when `dist/` is missing or older than a source file,
 * so that `npm install && npm start` works on a fresh clone and an edited checkout never runs stale
 * code. Plain JavaScript, because it has to run before anything is compiled.
 *
 *   node core/launch.js core/main [args…]   # runs dist/core/main.js with args
 *   node core/launch.js --build             # compiles dist/ (npm run build)
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const ROOT = path.resolve(import.meta.dirname, '..')
const DIST = path.join(ROOT, 'dist')
/** Written after a successful build, with the build's start time as its mtime. */
const STAMP = path.join(DIST, '.built')
const SOURCES = ['core', 'plugins', 'tsconfig.json', 'tsconfig.build.json']

/** Newest modification time (ms) among the files under `entry`. */
function newest(entry) {
  const stat = statSync(entry)
  if (!stat.isDirectory()) return stat.mtimeMs
  let latest = stat.mtimeMs // a deleted or renamed file changes its folder's mtime
  for (const name of readdirSync(entry)) latest = Math.max(latest, newest(path.join(entry, name)))
  return latest
}

function isFresh() {
  if (!existsSync(STAMP)) return false
  const built = statSync(STAMP).mtimeMs
  return SOURCES.every((source) => newest(path.join(ROOT, source)) <= built)
}

/** Files plugins read at run time beside their code (the console's public/ folder) go to dist/ too. */
function copyPluginFiles() {
  const plugins = path.join(ROOT, 'plugins')
  for (const name of readdirSync(plugins)) {
    const files = path.join(plugins, name, 'public')
    if (existsSync(files)) cpSync(files, path.join(DIST, 'plugins', name, 'public'), { recursive: true })
  }
}

function build() {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  if (!existsSync(tsc)) {
    throw new Error(
      'dist/ is missing or older than the sources, and TypeScript is not installed to compile it: run `npm install` (with dev dependencies), or `npm run build` where it is, and ship dist/',
    )
  }
  // Sources edited while tsc runs must leave dist/ stale, so the stamp carries the start time.
  const started = new Date()
  rmSync(DIST, { recursive: true, force: true })
  try {
    // tsc's diagnostics go to stderr: stdout belongs to the entry point (the CLI's output may be piped)
    execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], {
      cwd: ROOT,
      stdio: ['ignore', 2, 2],
    })
  } catch {
    throw new Error('compiling dist/ failed (tsc -p tsconfig.build.json): see the errors above')
  }
  copyPluginFiles()
  writeFileSync(STAMP, `${started.toISOString()}\n`)
  utimesSync(STAMP, started, started)
}

try {
  const entry = process.argv[2]
  if (entry === '--build') build()
  else if (!entry) throw new Error('usage: node core/launch.js <entry, e.g. core/main> [args…] | --build')
  else {
    if (!isFresh()) {
      process.stderr.write('hedgerow: compiling dist/ (it is missing or older than the sources)\n')
      build()
    }
    // The entry takes the launcher's place, so it sees its own arguments and node:cluster forks it directly.
    const file = path.join(DIST, `${entry}.js`)
    process.argv.splice(1, 2, file)
    await import(pathToFileURL(file).href)
  }
} catch (error) {
  process.stderr.write(`hedgerow: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
