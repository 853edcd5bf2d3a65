import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { gunzipSync } from 'node:zlib'
import { SdkAssets } from '../../../plugins/static-sdk/assets.ts'

const require = createRequire(import.meta.url)
const installed = JSON.parse(readFileSync(require.resolve('posthog-js/package.json'), 'utf8')) as { version: string }

describe('static-sdk SdkAssets', () => {
  const assets = new SdkAssets('posthog-js', import.meta.url)

  it('reads the version of the installed posthog-js package', () => {
    expect(assets.version).to.equal(installed.version)
  })

  it('gives array.js as the package ships it, with its gzip form and a quoted ETag', () => {
    const asset = assets.get('array.js')!
    expect(asset.body.equals(readFileSync(require.resolve('posthog-js/dist/array.js')))).to.equal(true)
    expect(gunzipSync(asset.gzipped).equals(asset.body)).to.equal(true)
    expect(asset.contentType).to.equal('application/javascript; charset=utf-8')
    expect(asset.etag).to.match(/^"[A-Za-z0-9_-]{32}"$/)
  })

  it('gives lazily loaded extensions and source maps (as JSON)', () => {
    expect(assets.get('surveys.js')?.contentType).to.match(/^application\/javascript/)
    expect(assets.get('array.js.map')?.contentType).to.match(/^application\/json/)
  })

  it('refuses anything that is not a listed dist file: types, paths, the manifest', () => {
    for (const name of [
      'array.d.ts',
      '../package.json',
      'package.json',
      '..%2Fpackage.json',
      'src',
      'integrity.json',
      'nope.js',
    ]) {
      expect(assets.get(name), name).to.equal(undefined)
    }
  })

  it('refuses a package that is not the browser SDK', () => {
    expect(() => new SdkAssets('mocha', import.meta.url)).to.throw(/no array\.js|ENOENT/)
  })
})
