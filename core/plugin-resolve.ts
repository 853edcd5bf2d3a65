/**
 * Turns a config `plugin` name into a module to import, by exactly one rule per form
 * (models.md §5.5): a built-in registry key, a `./` or `../` path from the config file's folder,
 * or an npm package installed under the application root. No prefixes are guessed.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

export type PluginSource =
  | { kind: 'built-in'; name: string }
  | { kind: 'path'; file: string }
  | { kind: 'npm'; name: string; version: string; file: string }

export class PluginResolveError extends Error {
  constructor(
    readonly code: 'INGEST_ERR_PLUGIN_NOT_FOUND' | 'INGEST_ERR_PLUGIN_INVALID',
    message: string,
  ) {
    super(message)
  }
}

const FORMS = 'a built-in name, a ./relative/path (from the config file folder), or an installed npm package name'

type Exports = string | { [key: string]: Exports } | null | undefined

/** The file an `exports` map points at for `import`, following Node's condition order. */
function exportTarget(exports: Exports): string | undefined {
  if (typeof exports === 'string') return exports
  if (!exports || typeof exports !== 'object') return undefined
  if ('.' in exports) return exportTarget(exports['.'])
  for (const condition of ['import', 'node', 'default']) {
    const target = exportTarget(exports[condition])
    if (target) return target
  }
  return undefined
}

function packageEntry(dir: string): { file: string; version: string } {
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    exports?: Exports
    main?: string
    version?: string
  }
  const target = exportTarget(pkg.exports) ?? pkg.main ?? 'index.js'
  return { file: path.resolve(dir, target), version: pkg.version ?? '0.0.0' }
}

/** A file, or a folder with a package.json or an index.js / index.ts. */
function fileFor(candidate: string): string | undefined {
  if (!existsSync(candidate)) return undefined
  if (!statSync(candidate).isDirectory()) return candidate
  if (existsSync(path.join(candidate, 'package.json'))) return packageEntry(candidate).file
  return ['index.js', 'index.mjs', 'index.ts'].map((f) => path.join(candidate, f)).find((f) => existsSync(f))
}

export function resolvePlugin(
  name: string,
  opts: { builtIns: ReadonlySet<string>; rootDir: string; configDir: string },
): PluginSource {
  if (opts.builtIns.has(name)) return { kind: 'built-in', name }
  if (name.startsWith('./') || name.startsWith('../')) {
    const candidate = path.resolve(opts.configDir, name)
    const file = fileFor(candidate)
    if (!file)
      throw new PluginResolveError('INGEST_ERR_PLUGIN_NOT_FOUND', `plugin "${name}": no file or folder at ${candidate}`)
    return { kind: 'path', file }
  }
  if (path.isAbsolute(name) || name.includes('\\') || /^[.]/.test(name)) {
    throw new PluginResolveError('INGEST_ERR_PLUGIN_INVALID', `plugin "${name}" is not ${FORMS}`)
  }
  for (let dir = opts.rootDir; ; dir = path.dirname(dir)) {
    const pkgDir = path.join(dir, 'node_modules', name)
    if (existsSync(path.join(pkgDir, 'package.json'))) return { kind: 'npm', name, ...packageEntry(pkgDir) }
    if (path.dirname(dir) === dir) break
  }
  throw new PluginResolveError(
    'INGEST_ERR_PLUGIN_NOT_FOUND',
    `plugin "${name}" is not a built-in and no npm package of that name is installed under ${opts.rootDir} (install it with npm install ${name}); a plugin is ${FORMS}`,
  )
}

export function importUrl(source: Exclude<PluginSource, { kind: 'built-in' }>): string {
  return pathToFileURL(source.file).href
}

export function describeSource(source: PluginSource): string {
  if (source.kind === 'built-in') return 'built-in'
  if (source.kind === 'npm') return `npm ${source.name}@${source.version}`
  return `path ${source.file}`
}
