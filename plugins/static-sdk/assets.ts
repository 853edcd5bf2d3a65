/**
 * The files of the installed posthog-js package's `dist` folder that a browser may ask for:
 * `array.js` (what the HTML snippet loads) and the extensions it loads lazily (`surveys.js`,
 * `recorder.js`, …), with their source maps. The list is read once at setup, so a request can only
 * name one of these files (no path is ever built from the URL). Contents are read on first request
 * and kept, with their gzip form and ETag, because the same few files are asked for by every page.
 */
import { createHash } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { gzipSync } from 'node:zlib'

export interface SdkAsset {
  readonly name: string
  readonly contentType: string
  readonly body: Buffer
  readonly gzipped: Buffer
  /** Strong validator over the exact bytes (quoted, as the header carries it). */
  readonly etag: string
}

const SERVED_FILE = /^[a-z0-9][a-z0-9.-]*\.js(\.map)?$/

export class SdkAssets {
  readonly version: string
  private readonly dir: string
  private readonly names: ReadonlySet<string>
  private readonly loaded = new Map<string, SdkAsset>()

  constructor(packageName: string, resolveFrom: string) {
    const manifest = createRequire(resolveFrom).resolve(`${packageName}/package.json`)
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }
    if (typeof pkg.version !== 'string') throw new Error(`${manifest} has no version`)
    this.version = pkg.version
    this.dir = path.join(path.dirname(manifest), 'dist')
    this.names = new Set(readdirSync(this.dir).filter((name) => SERVED_FILE.test(name)))
    if (!this.names.has('array.js')) throw new Error(`${this.dir} has no array.js: is ${packageName} the browser SDK?`)
  }

  get(name: string): SdkAsset | undefined {
    if (!this.names.has(name)) return undefined
    let asset = this.loaded.get(name)
    if (!asset) {
      const body = readFileSync(path.join(this.dir, name))
      asset = {
        name,
        contentType: name.endsWith('.map')
          ? 'application/json; charset=utf-8'
          : 'application/javascript; charset=utf-8',
        body,
        gzipped: gzipSync(body, { level: 9 }),
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`,
      }
      this.loaded.set(name, asset)
    }
    return asset
  }
}
