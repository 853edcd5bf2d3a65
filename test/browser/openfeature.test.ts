/**
 * The official OpenFeature web SDK with the OFREP web provider, unmodified and bundled as an app
 * would bundle it, in Debian's Chromium on a page of another site than the service: the bulk fetch,
 * evaluations from its cache equal to /flags?v=2, ETag revalidation answered 304, and a flag
 * changed in the admin API reaching the open page through the event stream, without a reload.
 */
import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { build } from 'esbuild'
import { expect } from 'chai'
import { ROOT_DIR, startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { useBrowser } from './helpers/chromium.ts'
import { eventually } from './helpers/service.ts'

const DEFINITIONS = {
  flags: [
    { id: 1, key: 'banner', active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
    {
      id: 2,
      key: 'colour',
      active: true,
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'red', rollout_percentage: 50 },
            { key: 'blue', rollout_percentage: 50 },
          ],
        },
      },
    },
    {
      id: 3,
      key: 'pro-only',
      active: true,
      filters: {
        groups: [
          { properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 },
        ],
      },
    },
  ],
}

/** The app: sets the provider, shows each flag, and shows them again on every configuration change. */
const APP = `
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk'
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'
const { baseUrl, apiKey } = window.OFREP_SETTINGS
const show = () => {
  const client = OpenFeature.getClient()
  document.getElementById('banner').textContent = String(client.getBooleanValue('banner', false))
  document.getElementById('colour').textContent = client.getStringValue('colour', 'none')
  document.getElementById('pro-only').textContent = String(client.getBooleanValue('pro-only', false))
  window.shown = (window.shown || 0) + 1
}
OpenFeature.addHandler(ProviderEvents.ConfigurationChanged, show)
await OpenFeature.setContext({ targetingKey: 'visitor-7', plan: 'pro' })
await OpenFeature.setProviderAndWait(new OFREPWebProvider({ baseUrl, headers: [['X-API-Key', apiKey]], cacheMode: 'disabled' }))
show()
`

let bundle: Promise<string> | undefined
const appBundle = () =>
  (bundle ??= build({
    stdin: { contents: APP, resolveDir: ROOT_DIR, loader: 'js' },
    bundle: true,
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  }).then((r) => r.outputFiles[0].text))

function startSite(settings: { baseUrl: string; apiKey: string }): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/app.js') {
      void appBundle().then((js) => {
        res.writeHead(200, { 'Content-Type': 'text/javascript' })
        res.end(js)
      })
      return
    }
    res.writeHead(req.url === '/' ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Flags</title>
<script>window.OFREP_SETTINGS = ${JSON.stringify(settings)}</script><script type="module" src="/app.js"></script></head>
<body><dl><dt>banner</dt><dd id="banner">…</dd><dt>colour</dt><dd id="colour">…</dd><dt>pro-only</dt><dd id="pro-only">…</dd></dl></body></html>`)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, origin: `http://localhost:${(server.address() as AddressInfo).port}` }),
    ),
  )
}

describe('OpenFeature web SDK with the OFREP web provider in headless Chromium', () => {
  const browser = useBrowser()
  let t: TestService
  let site: { server: Server; origin: string }
  before(async () => {
    t = await startTestService({
      plugins: [{ plugin: 'validate' }, { plugin: 'decide' }, { plugin: 'sink-mongo', required: true }],
    })
    expect((await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, DEFINITIONS)).status).to.equal(200)
    site = await startSite({ baseUrl: t.url, apiKey: t.project.api_token })
  })
  after(async () => {
    site?.server.closeAllConnections()
    site?.server.close()
    await t?.close()
  })

  it('shows /flags?v=2’s values, revalidates with 304, and takes a flag change without a reload', async () => {
    const { page, log } = await browser.newPage()
    await page.goto(`${site.origin}/`)
    await page.waitForFunction(() => (window as unknown as { shown?: number }).shown === 1)
    const response = await fetch(`${t.url}/flags/?v=2`, {
      method: 'POST',
      body: JSON.stringify({
        token: t.project.api_token,
        distinct_id: 'visitor-7',
        person_properties: { plan: 'pro' },
      }),
    })
    const expected = (
      (await response.json()) as { flags: Record<string, { enabled: boolean; variant: string | null }> }
    ).flags
    const shown = async () =>
      Object.fromEntries(
        await Promise.all(
          ['banner', 'colour', 'pro-only'].map(async (id) => [id, await page.locator(`#${id}`).textContent()]),
        ),
      )
    expect(await shown()).to.deep.equal({
      banner: 'true',
      colour: expected.colour.variant,
      'pro-only': String(expected['pro-only'].enabled),
    })

    expect(log.to('/ofrep/v1/events').length, 'the page opened the event stream').to.be.greaterThan(0)
    // a change that leaves this visitor's values as they are: the provider re-fetches, and the ETag answers 304
    expect(
      (await t.admin('PATCH', `/api/projects/${t.project.id}/feature_flags/3/`, { name: 'renamed' })).status,
    ).to.equal(200)
    await eventually(
      'a revalidation answered 304',
      async () => (log.to('/ofrep/v1/evaluate/flags').some((r) => r.status === 304) ? true : undefined),
      5000,
    )

    const started = performance.now()
    expect(
      (await t.admin('PATCH', `/api/projects/${t.project.id}/feature_flags/1/`, { active: false })).status,
    ).to.equal(200)
    await page.waitForFunction(() => document.getElementById('banner')?.textContent === 'false', undefined, {
      timeout: 5000,
    })
    const latency = performance.now() - started
    console.log(`      flag change reached the page in ${Math.round(latency)} ms`)
    expect(latency).to.be.below(1000)
    expect(page.url()).to.equal(`${site.origin}/`)
  })
})
