/**
 * The console's files: its own `public/` folder (HTML, CSS, ES modules) and the few ES modules of
 * its UI library, taken from the project's node_modules (preact, preact/hooks, htm). Everything is
 * read once at setup, so a request can only name a file of this list (no path is built from the
 * URL), and the browser gets exactly the installed versions: there is no bundle to go stale.
 */
import { createHash } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

export interface ConsoleAsset {
  readonly contentType: string
  readonly body: Buffer
  readonly gzipped: Buffer
  /** Strong validator over the exact bytes (quoted, as the header carries it). */
  readonly etag: string
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}

/** Served name → [package, ES module file inside it]. Names are what public/*.js import. */
const VENDOR_MODULES: Readonly<Record<string, readonly [string, string]>> = {
  'preact.js': ['preact', 'dist/preact.module.js'],
  'hooks.js': ['preact', 'hooks/dist/hooks.module.js'],
  'htm.js': ['htm', 'dist/htm.module.js'],
}

/** The installed package's folder (its `exports` hide package.json and the module files, so walk up from its main). */
function packageDir(name: string, resolveFrom: string): string {
  let dir = path.dirname(createRequire(resolveFrom).resolve(name))
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown }
      if (manifest.name === name) return dir
    } catch {
      // no package.json at this level: keep walking up
    }
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`cannot find the folder of the installed package ${name}`)
    dir = parent
  }
}

/**
 * Browsers resolve only relative and absolute specifiers without an import map, and an import map
 * is an inline script the page's CSP forbids; so the one bare import between the vendor modules
 * (`from "preact"` in hooks) is pointed at the served file, and the source-map comment removed
 * (the maps are not served).
 */
function relinkVendorModule(source: string): string {
  return source.replace(/from\s*(["'])preact\1/g, 'from"./preact.js"').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n')
}

function asset(name: string, body: Buffer): ConsoleAsset {
  const contentType = CONTENT_TYPES[path.extname(name)]
  if (!contentType) throw new Error(`no content type for ${name}`)
  return {
    contentType,
    body,
    gzipped: gzipSync(body, { level: 9 }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`,
  }
}

/** Every file of `dir` and its subfolders whose extension has a content type, by relative path. */
function publicFiles(dir: string): Map<string, ConsoleAsset> {
  const files = new Map<string, ConsoleAsset>()
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !CONTENT_TYPES[path.extname(entry.name)]) continue
    const full = path.join(entry.parentPath, entry.name)
    files.set(path.relative(dir, full).split(path.sep).join('/'), asset(entry.name, readFileSync(full)))
  }
  return files
}

export class ConsoleAssets {
  /** `index.html`, `app.js`, `pages/flags.js`, …, and `vendor/preact.js`, … */
  private readonly files: Map<string, ConsoleAsset>

  constructor(resolveFrom: string) {
    this.files = publicFiles(path.join(path.dirname(fileURLToPath(resolveFrom)), 'public'))
    for (const [name, [pkg, file]] of Object.entries(VENDOR_MODULES)) {
      const source = readFileSync(path.join(packageDir(pkg, resolveFrom), file), 'utf8')
      this.files.set(`vendor/${name}`, asset(name, Buffer.from(relinkVendorModule(source))))
    }
    if (!this.files.has('index.html')) throw new Error('the console has no public/index.html')
  }

  get(name: string): ConsoleAsset | undefined {
    return this.files.get(name)
  }
}
