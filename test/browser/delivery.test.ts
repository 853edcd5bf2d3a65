import { expect } from 'chai'
import { storedEvents } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { useBrowser } from './helpers/chromium.ts'
import { TestSite } from './helpers/pages.ts'
import { ApiProxy } from './helpers/proxy.ts'
import { eventually, serviceFlags, startBrowserTestService } from './helpers/service.ts'
import { distinctIdIn, flagsLoaded, flagsShownIn, openAndLoad } from './helpers/visitor.ts'
import type { PostHogWindow } from './helpers/visitor.ts'

const CAPTURE_PATH = /^\/(e|i\/v0\/e)\/(\?|$)/

describe('posthog-js delivery in headless Chromium: compression fallback and retries', () => {
  const browser = useBrowser()
  let t: TestService
  let site: TestSite
  let proxy: ApiProxy
  before(async () => {
    ;[t, site] = await Promise.all([startBrowserTestService(), TestSite.start()])
  })
  after(async () => {
    await site?.close()
    await t?.close()
  })
  beforeEach(async () => {
    proxy = await ApiProxy.start(t.url)
  })
  afterEach(() => proxy?.close())

  const capture = (page: import('playwright-core').Page, event: string, properties: Record<string, unknown> = {}) =>
    page.evaluate(
      ([e, p]) => (window as unknown as PostHogWindow).posthog.capture(e as string, p as Record<string, unknown>),
      [event, properties] as const,
    )
  const eventsOf = async (distinctId: string) => (await storedEvents(t)).filter((e) => e.distinct_id === distinctId)

  it('falls back to base64 form bodies when remote config offers no compression: events, flags and the beacon all arrive', async () => {
    let rewritten = 0
    proxy.rewriteResponses(`/array/${t.project.api_token}/config`, (body) =>
      body.replace(/"supportedCompression":\["gzip","gzip-js"\]/, () => {
        rewritten += 1
        return '"supportedCompression":[]'
      }),
    )
    const { page } = await browser.newPage()
    await openAndLoad(page, site.pageUrl({ sdk: 'snippet', token: t.project.api_token, apiHost: proxy.url }))
    expect(rewritten, 'remote config served without gzip').to.equal(1)
    await flagsLoaded(page)
    const distinctId = await distinctIdIn(page)
    const computed = await serviceFlags(t, { distinct_id: distinctId })
    const [variant] = await flagsShownIn(page, ['multivariate-flag'])
    expect(variant.value).to.equal(computed.flags['multivariate-flag'].variant)

    await capture(page, 'plain json', { n: 1 })
    await eventually('the JSON-sent event', async () =>
      (await eventsOf(distinctId)).find((e) => e.event === 'plain json'),
    )
    await page.click('#away')
    await eventually('the $pageleave', async () => (await eventsOf(distinctId)).find((e) => e.event === '$pageleave'))
    const beacon = await eventually('the beacon answered', async () =>
      proxy.forwarded.find((r) => r.mode === 'no-cors' && r.status !== undefined),
    )

    const flags = proxy.forwarded.filter((r) => r.path.startsWith('/flags/'))
    expect(flags.map((r) => [r.path, r.contentType, r.status])).to.deep.include([
      '/flags/?v=2&compression=base64',
      'application/x-www-form-urlencoded',
      200,
    ])
    expect(flags.every((r) => !r.gzip)).to.equal(true)
    const posts = proxy.forwarded.filter((r) => r.method === 'POST' && CAPTURE_PATH.test(r.path) && r.mode === 'cors')
    expect(posts.map((r) => [r.contentType, r.gzip, r.status])).to.deep.include(['application/json', false, 200])
    expect([beacon.path.endsWith('?compression=base64'), beacon.contentType, beacon.status]).to.deep.equal([
      true,
      'application/x-www-form-urlencoded',
      200,
    ])
    const mine = await eventsOf(distinctId)
    expect(mine.filter((e) => e.event === '$pageview')).to.have.length(1)
    expect(new Set(mine.map((e) => e.uuid)).size).to.equal(mine.length)
  })

  it('retries a batch whose response was lost after the service stored it, and stores every event once', async function () {
    // posthog-js retries 2.25–3.75 s after the failure, then waits for its poller: allow for a slow Chromium
    this.timeout(60_000)
    // a fetch of this page's, not a late $pageleave beacon (no-cors) of the previous test's page, which nothing retries
    proxy.loseNextResponse(
      (method, path, mode) => method === 'POST' && CAPTURE_PATH.test(path) && mode === 'cors',
      1000,
    )
    const { page } = await browser.newPage()
    await openAndLoad(page, site.pageUrl({ sdk: 'npm', token: t.project.api_token, apiHost: proxy.url }))
    const distinctId = await distinctIdIn(page)
    // sent while the first batch's answer is still pending, then lost
    for (let i = 0; i < 3; i++) await capture(page, 'during the slow response', { i })
    const lost = await eventually('the lost batch', async () =>
      proxy.forwarded.find((r) => r.lost && r.status !== undefined),
    )
    expect(lost.status, 'the service stored the batch whose answer was lost').to.equal(200)
    expect(lost.uuids).to.not.be.empty
    // posthog-js resends it with ?retry_count=1; Chromium itself may resend it first, unchanged, when
    // the connection it reused was closed before any answer (it does so for a POST too)
    const resent = (r: (typeof proxy.forwarded)[number]) =>
      r !== lost && r.status !== undefined && lost.uuids.every((uuid) => r.uuids.includes(uuid))
    const retry = await eventually('the retry', async () => proxy.forwarded.find(resent), 40_000)
    expect(retry.status).to.equal(200)
    expect(retry.uuids, 'the retry carries the lost batch again').to.have.members(lost.uuids)

    const mine = await eventsOf(distinctId)
    expect(
      mine.filter((e) => e.event === '$pageview'),
      'the $pageview sent twice',
    ).to.have.length(1)
    expect(
      mine
        .filter((e) => e.event === 'during the slow response')
        .map((e) => (e.properties as { i: number }).i)
        .sort(),
    ).to.deep.equal([0, 1, 2])
    expect(new Set(mine.map((e) => e.uuid)).size).to.equal(mine.length)
    expect(mine.map((e) => e.uuid)).to.include.members(lost.uuids)
  })
})
