/**
 * Issue 19's architecture rules over the real import graph: a plugin imports only the contract and
 * its own folder, the evaluator neither koa nor mongodb, the embedded store nothing of the service,
 * and core reaches plugins only through the registry. An exception must be listed in ALLOWED with
 * the reason for it; the list may only shrink, so an entry whose import is gone fails the test
 * until it is deleted here.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'chai'
import { ROOT, importGraph, specifiers, violation, type ImportEdge } from './import-graph.ts'

/** Known violations, `importer -> imported`, grouped by what the contract still lacks. None today. */
const ALLOWED: ReadonlyArray<{ reason: string; imports: readonly string[] }> = []

const key = ({ from, to }: ImportEdge) => `${from} -> ${to}`

describe('architecture: the import graph of core/ and plugins/', () => {
  const graph = importGraph()
  const violations = graph.filter((edge) => violation(edge) !== null)
  const allowed = ALLOWED.flatMap((group) => group.imports)

  it('reads the real graph (the registry imports every built-in plugin)', () => {
    const fromRegistry = graph.filter((edge) => edge.from === 'plugins/index.ts').map((edge) => edge.to)
    expect(fromRegistry).to.include.members(['core/plugin-api.ts', 'plugins/geoip/index.ts', 'plugins/decide/index.ts'])
  })

  it('has no import that breaks a rule except those allow-listed', () => {
    const unexpected = violations
      .filter((edge) => !allowed.includes(key(edge)))
      .map((edge) => `${key(edge)}: ${violation(edge)}`)
    expect(unexpected, 'new imports past the architecture rules').to.deep.equal([])
  })

  it('lists no allowed violation that no longer exists, so the list only shrinks', () => {
    const present = new Set(violations.map(key))
    expect(
      allowed.filter((entry) => !present.has(entry)),
      'delete these from ALLOWED',
    ).to.deep.equal([])
    expect(new Set(allowed).size, 'duplicate allow-list entries').to.equal(allowed.length)
    console.log(`      architecture: ${violations.length} allow-listed violations remain`)
  })
})

describe('architecture: the rules', () => {
  const broken = (from: string, to: string) => violation({ from, to })

  it('lets a plugin import the contract, its own folder and packages, nothing else of the repository', () => {
    expect(broken('plugins/geoip/enrich.ts', 'core/plugin-api.ts')).to.equal(null)
    expect(broken('plugins/geoip/enrich.ts', 'plugins/geoip/lookup.ts')).to.equal(null)
    expect(broken('plugins/geoip/enrich.ts', 'maxmind')).to.equal(null)
    expect(broken('plugins/geoip/enrich.ts', 'core/config.ts')).to.match(/past the contract/)
    expect(broken('plugins/decide/index.ts', 'plugins/geoip/lookup.ts')).to.match(/past the contract/)
    expect(broken('plugins/geo/index.ts', 'plugins/geoip/lookup.ts')).to.match(/past the contract/)
  })

  it('counts every repository file as past the contract, not only those of core/ and plugins/', () => {
    for (const file of ['config/default.json', 'test/helpers/mongo.ts', 'package.json', '.plugin-sdk/plugin-api.js'])
      expect(broken('plugins/geoip/enrich.ts', file), file).to.match(/past the contract/)
    expect(broken('plugins/geoip/enrich.ts', '../elsewhere/x.ts')).to.match(/past the contract/)
    expect(broken('plugins/decide/evaluator/flag.ts', 'test/helpers/mongo.ts')).to.match(/outside its folder/)
    expect(broken('core/storage/embedded/server.ts', 'config/default.json')).to.match(/embedded store/)
  })

  it('takes every declared package for a package, never for a repository file', () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>
    const packages = ['dependencies', 'devDependencies'].flatMap((field) =>
      Object.keys((manifest[field] ?? {}) as Record<string, string>),
    )
    expect(packages).to.include('typebox')
    for (const name of packages) expect(broken('plugins/geoip/enrich.ts', `${name}/sub`), name).to.equal(null)
    expect(broken('plugins/geoip/enrich.ts', 'hedgerow/plugin-api')).to.equal(null)
  })

  it('holds a plugin that is one file to the contract alone, and leaves the registry free', () => {
    expect(broken('plugins/geoip.ts', 'core/plugin-api.ts')).to.equal(null)
    expect(broken('plugins/geoip.ts', 'core/config.ts')).to.match(/past the contract/)
    expect(broken('plugins/geoip.ts', 'plugins/decide/index.ts')).to.match(/past the contract/)
    expect(broken('plugins/index.ts', 'plugins/geoip/index.ts')).to.equal(null)
  })

  it('keeps the evaluator free of koa, mongodb and the rest of decide', () => {
    expect(broken('plugins/decide/evaluator/flag.ts', 'koa')).to.match(/koa or mongodb/)
    expect(broken('plugins/decide/evaluator/flag.ts', '@koa/router')).to.match(/koa or mongodb/)
    expect(broken('plugins/decide/evaluator/flag.ts', 'mongodb')).to.match(/koa or mongodb/)
    expect(broken('plugins/decide/evaluator/flag.ts', 'plugins/decide/service.ts')).to.match(/outside its folder/)
    expect(broken('plugins/decide/evaluator/flag.ts', 'plugins/decide/evaluator/hash.ts')).to.equal(null)
  })

  it('keeps the embedded store free of the service', () => {
    expect(broken('core/storage/embedded/server.ts', 'core/config.ts')).to.match(/embedded store/)
    expect(broken('core/storage/embedded/server.ts', 'core/storage/embedded/cursors.ts')).to.equal(null)
    expect(broken('core/storage/embedded/server.ts', 'bson')).to.equal(null)
  })

  it('lets core reach plugins only through the registry', () => {
    expect(broken('core/loader.ts', 'plugins/index.ts')).to.equal(null)
    expect(broken('core/loader.ts', 'plugins/geoip/lookup.ts')).to.match(/registry/)
    expect(broken('core/storage/mongo.ts', 'plugins/geoip/index.ts')).to.match(/registry/)
    expect(broken('core/loader.ts', 'plugins/geoip.ts')).to.match(/registry/)
  })

  it('reads every import form and ignores imports inside comments', () => {
    const source = [
      "import a from './a.ts'",
      "import type {\n  B,\n  C,\n} from '../b.ts'",
      "export { d } from './d.ts'",
      "export * from 'e'",
      "import './f.ts'",
      "const g = await import('./g.ts')",
      'const t = await import(`./t.ts`)',
      // a computed specifier is no module name to read
      'const u = await import(`./$' + '{name}.ts`)',
      "// import h from './h.ts'",
      "/* import i from './i.ts' */",
      "const text = 'from here'",
    ].join('\n')
    expect(specifiers(source)).to.have.members(['./a.ts', '../b.ts', './d.ts', 'e', './f.ts', './g.ts', './t.ts'])
  })
})
