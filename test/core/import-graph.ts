/**
 * The import graph of `core/` and `plugins/` and the architecture rules of issue 19 applied to it.
 * Read with regular expressions over the statements, because the installed TypeScript (7, the
 * native compiler) has no JavaScript API; `import type`, `export … from`, side-effect imports and
 * `import('literal')` (or a template literal without `${}`) all count. Paths are
 * repository-relative with forward slashes.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

export const ROOT = path.resolve(import.meta.dirname, '..', '..')

export interface ImportEdge {
  /** The importing file, e.g. `plugins/geoip/index.ts`. */
  from: string
  /** A repository file for a relative import, else the bare specifier (`koa`, `node:fs`). */
  to: string
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`
    if (entry.isDirectory()) return sourceFiles(rel)
    return /\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [rel] : []
  })
}

const STATIC = /^[ \t]*(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"\n]+)['"]/gm
const SIDE_EFFECT = /^[ \t]*import\s*['"]([^'"\n]+)['"]/gm
const DYNAMIC = /\bimport\(\s*(['"`])([^'"`$\n]+)\1\s*\)/g

/** The module specifiers a source text imports; comments are dropped first so examples in them do not count. */
export function specifiers(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^[ \t]*\/\/.*$/gm, '')
  return [STATIC, SIDE_EFFECT, DYNAMIC].flatMap((pattern) => [...code.matchAll(pattern)].map((match) => match.at(-1)!))
}

export function importGraph(dirs: readonly string[] = ['core', 'plugins']): ImportEdge[] {
  return dirs.flatMap(sourceFiles).flatMap((from) => {
    const unique = new Set(specifiers(readFileSync(path.join(ROOT, from), 'utf8')))
    return [...unique].map((fileName) => ({
      from,
      to: fileName.startsWith('.')
        ? path.posix.normalize(path.posix.join(path.posix.dirname(from), fileName))
        : fileName,
    }))
  })
}

export const CONTRACT = 'core/plugin-api.ts'
export const REGISTRY = 'plugins/index.ts'
const EVALUATOR = 'plugins/decide/evaluator/'
const EMBEDDED = 'core/storage/embedded/'

/**
 * The repository's top-level entries (core, plugins, config, test, package.json, .plugin-sdk, …):
 * a relative import resolves to a path under one of them, or escapes the repository (`..`); a
 * package's bare specifier does neither (no dependency is named like a top-level entry).
 */
const TOP_LEVEL = new Set(readdirSync(ROOT))
const isRepoFile = (to: string) => to.startsWith('..') || TOP_LEVEL.has(to.split('/')[0]!)
const packageName = (to: string) =>
  to
    .split('/')
    .slice(0, to.startsWith('@') ? 2 : 1)
    .join('/')
/**
 * What of the repository a plugin's file may import besides the contract: its folder
 * (`plugins/geoip/`), or only itself for a plugin that is one file (`plugins/geoip.ts`); null
 * for the registry and for files outside plugins/.
 */
function pluginFolder(file: string): string | null {
  if (!file.startsWith('plugins/') || file === REGISTRY) return null
  return /^(plugins\/[^/]+\/)/.exec(file)?.[1] ?? file
}

/** Why an import breaks a rule, or null when it is allowed. */
export function violation({ from, to }: ImportEdge): string | null {
  const folder = pluginFolder(from)
  if (from.startsWith(EVALUATOR)) {
    if (['koa', '@koa/router', 'mongodb'].includes(packageName(to))) return 'the evaluator imports koa or mongodb'
    if (isRepoFile(to) && to !== CONTRACT && !to.startsWith(EVALUATOR))
      return 'the evaluator imports outside its folder'
    return null
  }
  if (folder) {
    if (isRepoFile(to) && to !== CONTRACT && !to.startsWith(folder)) return 'a plugin imports past the contract'
    return null
  }
  if (from.startsWith(EMBEDDED)) {
    if (isRepoFile(to) && !to.startsWith(EMBEDDED)) return 'the embedded store imports the service'
    return null
  }
  if (from.startsWith('core/') && to.startsWith('plugins/') && to !== REGISTRY)
    return 'core imports a plugin past the registry'
  return null
}
