/**
 * The website under test: a second tiny HTTP server, on another origin than the API (the page is
 * http://localhost:<port>, the service http://127.0.0.1:<port>), so every call posthog-js makes is
 * a real cross-site CORS request. A page loads posthog-js the two ways websites do:
 * - `snippet`: the HTML snippet of docs/browser.md, which loads <api_host>/static/array.js;
 * - `npm`: `import posthog from 'posthog-js'` bundled by esbuild, as an app's bundler would.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { build } from 'esbuild'
import { ROOT_DIR } from '../../helpers/service.ts'

export type SdkLoading = 'snippet' | 'npm'

export interface PageOptions {
  sdk: SdkLoading
  token: string
  apiHost: string
  /** Extra posthog-js init config, merged over the test defaults. */
  config?: Record<string, unknown>
}

/**
 * posthog-js drops events from headless browsers unless told not to; batches are flushed every
 * 250 ms (its minimum) instead of 3 s so that tests wait less. Nothing else differs from defaults.
 */
export function testInitConfig(apiHost: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    api_host: apiHost,
    opt_out_useragent_filter: true,
    request_queue_config: { flush_interval_ms: 250 },
    ...extra,
  }
}

/** The snippet of docs/browser.md up to its init call, so the documented snippet is the tested one. */
export function documentedSnippetLoader(): string {
  const doc = readFileSync(path.join(ROOT_DIR, 'docs/browser.md'), 'utf8')
  const block = /```html\n<script>\n([\s\S]*?)<\/script>\n```/.exec(doc)?.[1]
  const loader = block?.split(/^\s*posthog\.init\(/m)[0]
  if (!loader || loader === block) throw new Error('docs/browser.md has no ```html snippet ending in posthog.init(…)')
  return loader
}

let bundle: Promise<string> | undefined
/** `import posthog from 'posthog-js'`, resolved from the project's node_modules like any app's. */
function npmBundle(): Promise<string> {
  bundle ??= build({
    stdin: {
      contents: "import posthog from 'posthog-js'\nwindow.posthog = posthog\n",
      resolveDir: ROOT_DIR,
      loader: 'js',
    },
    bundle: true,
    format: 'iife',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  }).then((result) => result.outputFiles[0].text)
  return bundle
}

/** JSON that may sit inside a script element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c')

function pageHtml(options: PageOptions): string {
  const config = testInitConfig(options.apiHost, options.config)
  // `loaded` cannot travel as JSON: the page adds it, and tests wait on window.__posthogLoaded.
  const init = `var config = ${scriptJson(config)}; config.loaded = function () { window.__posthogLoaded = true }; posthog.init(${scriptJson(options.token)}, config)`
  const sdk =
    options.sdk === 'snippet'
      ? `<script>\n${documentedSnippetLoader()}\n${init}\n</script>`
      : `<script src="/npm-bundle.js"></script>\n<script>${init}</script>`
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Hedgerow test shop</title>
${sdk}
</head><body>
<h1>Test shop</h1>
<button id="buy">Buy</button>
<a id="away" href="/away.html">Leave</a>
</body></html>`
}

export class TestSite {
  private constructor(
    private readonly server: Server,
    /** http://localhost:<port>: a different site than the API at 127.0.0.1. */
    readonly origin: string,
  ) {}

  static async start(): Promise<TestSite> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost')
      const reply = (status: number, type: string, body: string) => {
        res.writeHead(status, { 'Content-Type': `${type}; charset=utf-8`, 'Cache-Control': 'no-store' })
        res.end(body)
      }
      if (url.pathname === '/page.html') {
        const options = JSON.parse(url.searchParams.get('o') ?? 'null') as PageOptions | null
        return options ? reply(200, 'text/html', pageHtml(options)) : reply(400, 'text/plain', 'no ?o=')
      }
      if (url.pathname === '/favicon.ico') return reply(204, 'image/x-icon', '')
      if (url.pathname === '/away.html')
        return reply(200, 'text/html', '<!doctype html><title>Elsewhere</title><p>elsewhere</p>')
      if (url.pathname === '/npm-bundle.js') {
        return void npmBundle().then(
          (js) => reply(200, 'application/javascript', js),
          (error: Error) => reply(500, 'text/plain', error.message),
        )
      }
      reply(404, 'text/plain', 'not found')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return new TestSite(server, `http://localhost:${(server.address() as AddressInfo).port}`)
  }

  pageUrl(options: PageOptions, extraQuery = ''): string {
    return `${this.origin}/page.html?o=${encodeURIComponent(JSON.stringify(options))}${extraQuery}`
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}
