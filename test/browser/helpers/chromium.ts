/**
 * One headless Debian Chromium per test file, driven by playwright-core (no browser download works
 * on the build machines, so it is the system's /usr/bin/chromium, which .ci/run installs, or the one
 * CHROMIUM_PATH names; without it the suite is skipped, see ../../helpers/requires.ts). Every
 * page records its console and the requests it made; when a test fails they are printed, since a
 * browser test that only says "expected 0 to equal 3" cannot be debugged.
 */
import { chromium } from 'playwright-core'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { CHROMIUM_PATH, requireTool } from '../../helpers/requires.ts'

/** Without the networking flags Chromium keeps calling Google's hosts, which this network refuses. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface RecordedRequest {
  method: string
  url: string
  status?: number
  failure?: string
  /** Sec-Fetch-Mode: `cors` for fetch/XHR and CORS scripts, `no-cors` for sendBeacon. */
  mode?: string
  contentType?: string
  /** The body starts with the gzip magic bytes (posthog-js sends gzip unmarked, as text/plain). */
  gzip?: boolean
}

export class PageLog {
  readonly console: string[] = []
  readonly requests: RecordedRequest[] = []

  constructor(page: Page) {
    page.on('console', (message) => this.console.push(`[${message.type()}] ${message.text()}`))
    page.on('pageerror', (error) => this.console.push(`[pageerror] ${error.message}`))
    page.on('request', (request) => {
      const body = request.postDataBuffer()
      const entry: RecordedRequest = {
        method: request.method(),
        url: request.url(),
        contentType: request.headers()['content-type'],
        gzip: body ? body[0] === 0x1f && body[1] === 0x8b : undefined,
      }
      this.requests.push(entry)
      // Sec-Fetch-* are added by the network stack, so only the full header list has them
      void request.allHeaders().then(
        (headers) => (entry.mode = headers['sec-fetch-mode']),
        () => undefined,
      )
    })
    const entryOf = (url: string, method: string) =>
      this.requests.findLast(
        (r) => r.url === url && r.method === method && r.status === undefined && r.failure === undefined,
      )
    page.on('requestfinished', async (request) => {
      const entry = entryOf(request.url(), request.method())
      const response = await request.response().catch(() => null)
      if (entry) entry.status = response?.status() ?? 0
    })
    page.on('requestfailed', (request) => {
      const entry = entryOf(request.url(), request.method())
      if (entry) entry.failure = request.failure()?.errorText ?? 'failed'
    })
  }

  /** Waits (bounded) until these requests finished or failed and their headers were read. */
  async settle(requests: readonly RecordedRequest[] = this.requests, timeoutMs = 5_000): Promise<void> {
    const pending = () =>
      requests.some((r) => (r.status === undefined && r.failure === undefined) || r.mode === undefined)
    for (const deadline = Date.now() + timeoutMs; pending() && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 50))
  }

  /** Requests whose URL path starts with `path`, on any host. */
  to(path: string): RecordedRequest[] {
    return this.requests.filter((r) => new URL(r.url).pathname.startsWith(path))
  }

  print(title: string): void {
    const lines = [`--- browser log of ${title}`, 'console:', ...this.console.map((l) => `  ${l}`), 'requests:']
    for (const r of this.requests) {
      const details = [r.mode, r.contentType, r.gzip ? 'gzip' : undefined].filter(Boolean).join(', ')
      lines.push(`  ${r.method} ${r.url} → ${r.failure ?? r.status ?? 'pending'}${details ? ` (${details})` : ''}`)
    }
    console.log(lines.join('\n'))
  }
}

export interface BrowserHandle {
  /** A page in a new context (fresh cookies and storage: a new visitor). */
  newPage(): Promise<{ page: Page; log: PageLog; context: BrowserContext }>
}

/**
 * Registers the mocha hooks of a browser test file: skip without a Chromium, launch before, close after, and after each test
 * print the logs of its pages when it failed, then close them. Call it inside `describe`.
 */
export function useBrowser(): BrowserHandle {
  let browser: Browser | undefined
  let open: Array<{ context: BrowserContext; log: PageLog }> = []

  requireTool('chromium')
  before(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS })
  })
  afterEach(async function () {
    const failed = this.currentTest?.state === 'failed'
    for (const [i, { context, log }] of open.entries()) {
      if (failed) log.print(`"${this.currentTest?.title}", page ${i + 1}`)
      await context.close().catch(() => undefined)
    }
    open = []
  })
  after(async () => {
    await browser?.close()
  })

  return {
    async newPage() {
      if (!browser) throw new Error('the browser is not running: useBrowser() must be called inside describe')
      const context = await browser.newContext()
      const page = await context.newPage()
      const log = new PageLog(page)
      open.push({ context, log })
      return { page, log, context }
    },
  }
}
