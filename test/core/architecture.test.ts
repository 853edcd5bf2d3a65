/**
 * Issue 19's architecture rules over the real import graph: a plugin imports only the contract and
 * its own folder, the evaluator neither koa nor mongodb, the embedded store nothing of the service,
 * and core reaches plugins only through the registry. Today's violations are listed below; the list
 * may only shrink, so an entry whose import is gone fails the test until it is deleted here.
 */
import { expect } from 'chai'
import { importGraph, specifiers, violation, type ImportEdge } from './import-graph.ts'

/** Known violations, `importer -> imported`, grouped by what the contract still lacks. */
const ALLOWED: ReadonlyArray<{ reason: string; imports: readonly string[] }> = [
  {
    reason: 'the HTTP kit (admin routes and schemas, admin key, body reading, rate limit) is not in the contract yet',
    imports: [
      'plugins/decide/http/definitions-routes.ts -> core/admin/key.ts',
      'plugins/flag-attribution/index.ts -> core/admin/routes.ts',
      'plugins/group-update/routes.ts -> core/admin/routes.ts',
      'plugins/decide/definitions/import.ts -> core/admin/schemas.ts',
      'plugins/decide/http/admin-cohorts.ts -> core/admin/schemas.ts',
      'plugins/decide/http/admin-evaluate.ts -> core/admin/schemas.ts',
      'plugins/decide/http/admin-flags.ts -> core/admin/schemas.ts',
      'plugins/decide/http/flags-request.ts -> core/admin/schemas.ts',
      'plugins/group-update/routes.ts -> core/admin/schemas.ts',
      'plugins/decide/http/flags-routes.ts -> core/capture/decode.ts',
      'plugins/decide/http/ofrep-routes.ts -> core/capture/decode.ts',
      'plugins/decide/http/definitions-routes.ts -> core/http/payload.ts',
      'plugins/decide/http/flags-routes.ts -> core/http/payload.ts',
      'plugins/decide/http/ofrep-routes.ts -> core/http/payload.ts',
      'plugins/decide/http/ofrep-routes.ts -> core/http/rate-limit.ts',
      'plugins/decide/index.ts -> core/http/rate-limit.ts',
      'plugins/decide/http/admin-common.ts -> core/http/read-body.ts',
    ],
  },
  {
    reason: 'capture rules every event needs (distinct id, uuid) live in core but are not exposed by the contract',
    imports: [
      'plugins/alias-resolve/merge-id.ts -> core/capture/distinct-id.ts',
      'plugins/group-update/step.ts -> core/capture/distinct-id.ts',
      'plugins/validate/rules.ts -> core/capture/uuid.ts',
    ],
  },
  {
    reason: 'batched database reads (coalesce, find-all) belong to the data model, which has no home yet',
    imports: [
      'plugins/alias-resolve/batched-commands.ts -> core/coalesce.ts',
      'plugins/decide/store/group-reader.ts -> core/coalesce.ts',
      'plugins/decide/store/person-reader.ts -> core/coalesce.ts',
      'plugins/alias-resolve/batched-commands.ts -> core/storage/find-all.ts',
      'plugins/decide/store/group-reader.ts -> core/storage/find-all.ts',
      'plugins/decide/store/person-reader.ts -> core/storage/find-all.ts',
    ],
  },
  {
    reason: 'deadlines, metrics and the NATS connection are core services the contract does not hand out yet',
    imports: [
      'plugins/decide/service.ts -> core/deadlines.ts',
      'plugins/spike-detection/index.ts -> core/metrics.ts',
      'plugins/sink-nats/index.ts -> core/nats.ts',
    ],
  },
  {
    reason: 'alias-resolve and person-update are one module in two folders (shared store, mutual calls)',
    imports: [
      'plugins/person-update/update.ts -> plugins/alias-resolve/merge.ts',
      'plugins/person-update/update.ts -> plugins/alias-resolve/person-store.ts',
      'plugins/person-update/normalise.ts -> plugins/alias-resolve/properties.ts',
      'plugins/person-update/property-ops.ts -> plugins/alias-resolve/properties.ts',
      'plugins/person-update/update.ts -> plugins/alias-resolve/properties.ts',
      'plugins/person-update/update.ts -> plugins/alias-resolve/sequence-persons.ts',
    ],
  },
  {
    reason: "decide reads persons and groups through other plugins' stores: no typed readers in the contract yet",
    imports: [
      'plugins/decide/store/hash-key-overrides.ts -> plugins/alias-resolve/person-store.ts',
      'plugins/decide/store/person-reader.ts -> plugins/alias-resolve/person-store.ts',
      'plugins/decide/store/request-data.ts -> plugins/alias-resolve/person-store.ts',
      'plugins/decide/store/person-reader.ts -> plugins/alias-resolve/remembered-person-ids.ts',
      'plugins/decide/store/definitions.ts -> plugins/group-update/documents.ts',
      'plugins/decide/store/group-reader.ts -> plugins/group-update/documents.ts',
      'plugins/decide/store/replace.ts -> plugins/group-update/documents.ts',
    ],
  },
  {
    reason: 'decide looks up GeoIP itself for $geoip_* person properties instead of through a service',
    imports: [
      'plugins/decide/index.ts -> plugins/geoip/lookup.ts',
      'plugins/decide/service.ts -> plugins/geoip/lookup.ts',
    ],
  },
]

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
  })

  it('reads every import form and ignores imports inside comments', () => {
    const source = [
      "import a from './a.ts'",
      "import type {\n  B,\n  C,\n} from '../b.ts'",
      "export { d } from './d.ts'",
      "export * from 'e'",
      "import './f.ts'",
      "const g = await import('./g.ts')",
      "// import h from './h.ts'",
      "/* import i from './i.ts' */",
      "const text = 'from here'",
    ].join('\n')
    expect(specifiers(source)).to.have.members(['./a.ts', '../b.ts', './d.ts', 'e', './f.ts', './g.ts'])
  })
})
