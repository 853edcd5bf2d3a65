import Router from '@koa/router'
import { expect } from 'chai'
import Koa from 'koa'
import { get } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ConsoleAssets } from '../../../plugins/console/assets.ts'
import { CONTENT_SECURITY_POLICY, mountConsole } from '../../../plugins/console/routes.ts'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'

const plugins = (options?: Record<string, unknown>) => [
  { plugin: 'validate' },
  { plugin: 'console', ...(options ? { options } : {}) },
  { plugin: 'sink-mongo', required: true },
]
const noRedirect = { redirect: 'manual' } as const

describe('console routes', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({ plugins: plugins() })
  })
  after(() => t.close())

  it('serves the page at /console/, redirecting / and /console there', async () => {
    for (const from of ['/', '/console']) {
      const res = await fetch(`${t.url}${from}`, noRedirect)
      expect(res.status, from).to.equal(302)
      expect(res.headers.get('location'), from).to.equal('/console/')
    }
    const page = await fetch(`${t.url}/console/`)
    expect(page.status).to.equal(200)
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8')
    expect(await page.text()).to.contain('<script type="module" src="app.js">')
  })

  it('sends the CSP, nosniff and no-framing on pages, modules and errors alike', async () => {
    for (const p of [
      '/console/',
      '/console/app.js',
      '/console/pages/flags.js',
      '/console/vendor/preact.js',
      '/console/nope.js',
    ]) {
      const res = await fetch(`${t.url}${p}`)
      expect(res.headers.get('content-security-policy'), p).to.equal(CONTENT_SECURITY_POLICY)
      expect(res.headers.get('x-content-type-options'), p).to.equal('nosniff')
      expect(res.headers.get('x-frame-options'), p).to.equal('DENY')
    }
    expect(CONTENT_SECURITY_POLICY).to.contain("script-src 'self'").and.not.contain('unsafe')
  })

  it('answers 404 with a JSON error for files it does not have, and 304 to a matching ETag', async () => {
    const missing = await fetch(`${t.url}/console/pages/nope.js`)
    expect(missing.status).to.equal(404)
    expect(await missing.json()).to.include({ code: 'not_found' })
    expect((await fetch(`${t.url}/console/index.html`)).status).to.equal(404)
    const first = await fetch(`${t.url}/console/app.js`)
    // a raw request: fetch adds Cache-Control: no-cache to conditional requests, which always gets the body
    const again = await new Promise<number>((resolve, reject) =>
      get(`${t.url}/console/app.js`, { headers: { 'If-None-Match': first.headers.get('etag')! } }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      }).on('error', reject),
    )
    expect(again).to.equal(304)
    expect(first.headers.get('cache-control')).to.equal('no-cache')
  })

  it('is served at another path when configured, and not at all when disabled', async () => {
    const moved = await startTestService({ plugins: plugins({ path: '/ops/console', redirectRoot: false }) })
    const off = await startTestService({ plugins: plugins({ enabled: false }) })
    try {
      expect((await fetch(`${moved.url}/ops/console/`)).status).to.equal(200)
      expect((await fetch(`${moved.url}/ops/console/vendor/htm.js`)).status).to.equal(200)
      expect((await fetch(`${moved.url}/`, noRedirect)).status).to.equal(404)
      expect((await fetch(`${off.url}/console/`)).status).to.equal(404)
      expect((await fetch(`${off.url}/`, noRedirect)).status).to.equal(404)
    } finally {
      await Promise.all([moved.close(), off.close()])
    }
  })

  it('leaves / to a route mounted before it', async () => {
    const router = new Router()
    router.get('/', (ctx) => {
      ctx.body = 'home of another plugin'
    })
    mountConsole(
      router,
      new ConsoleAssets(new URL('../../../plugins/console/index.ts', import.meta.url).href),
      '/console',
      true,
    )
    const app = new Koa().use(router.routes())
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, noRedirect)
      expect(res.status).to.equal(200)
      expect(await res.text()).to.equal('home of another plugin')
    } finally {
      server.close()
    }
  })
})
