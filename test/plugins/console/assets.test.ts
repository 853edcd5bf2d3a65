import { expect } from 'chai'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { ConsoleAssets } from '../../../plugins/console/assets.ts'
import { ROOT_DIR } from '../../helpers/service.ts'

const PUBLIC = path.join(ROOT_DIR, 'plugins/console/public')
const assets = new ConsoleAssets(new URL('../../../plugins/console/index.ts', import.meta.url).href)
const publicModules = readdirSync(PUBLIC, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.js'))
const served = [...publicModules, 'vendor/preact.js', 'vendor/hooks.js', 'vendor/htm.js']

/**
 * The specifiers of every static import and re-export of an ES module, leaving out import lines
 * inside template literals (the set-up snippets quote `import … from 'posthog-node'`).
 */
const importsOf = (source: string) =>
  [...source.matchAll(/(?:import|export)\b[^'"`]*?from\s*(['"])([^'"]+)\1/g)]
    .filter((m) => (source.slice(0, m.index).match(/`/g) ?? []).length % 2 === 0)
    .map((m) => m[2])

describe('console ConsoleAssets', () => {
  it('serves every file of public/ and the three vendored modules, with gzip forms and ETags', () => {
    expect(publicModules).to.include.members(['app.js', 'api.js', 'pages/flag-editor.js'])
    for (const name of [...served, 'index.html', 'style.css']) {
      const asset = assets.get(name)
      expect(asset, name).to.not.equal(undefined)
      expect(gunzipSync(asset!.gzipped).equals(asset!.body), name).to.equal(true)
      expect(asset!.etag, name).to.match(/^"[A-Za-z0-9_-]{32}"$/)
    }
    expect(assets.get('app.js')!.contentType).to.equal('text/javascript; charset=utf-8')
    expect(assets.get('index.html')!.contentType).to.equal('text/html; charset=utf-8')
  })

  it('resolves every import of every served module to a served file: no bare specifier, no missing file', () => {
    for (const name of served) {
      const source = assets.get(name)!.body.toString('utf8')
      for (const specifier of importsOf(source)) {
        expect(specifier, `${name} imports ${specifier}`).to.match(/^\.\.?\//)
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(name), specifier))
        expect(assets.get(target), `${name} imports ${specifier}`).to.not.equal(undefined)
      }
    }
    expect(importsOf(assets.get('app.js')!.body.toString())).to.include.members(['./api.js', './pages/flag-editor.js'])
    expect(importsOf(assets.get('vendor/hooks.js')!.body.toString())).to.deep.equal(['./preact.js'])
  })

  it('refuses names outside its list: paths, the manifest, sources of the plugin', () => {
    for (const name of [
      '../index.ts',
      '../assets.ts',
      'package.json',
      'vendor/../../index.ts',
      'nope.js',
      'vendor/preact.js.map',
    ])
      expect(assets.get(name), name).to.equal(undefined)
  })

  it('has no inline script or style in its page, which the CSP would block', () => {
    const page = assets.get('index.html')!.body.toString()
    expect(page).to.match(/<script type="module" src="app\.js"><\/script>/)
    expect(page.match(/<script/g)).to.have.length(1)
    expect(page).to.not.match(/\son[a-z]+=|style=/)
  })
})
