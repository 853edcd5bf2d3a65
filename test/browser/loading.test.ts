import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { storedEvents } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { useBrowser } from './helpers/chromium.ts'
import { TestSite } from './helpers/pages.ts'
import { ApiProxy } from './helpers/proxy.ts'
import type { SdkLoading } from './helpers/pages.ts'
import { FLAG_DEFINITIONS, eventually, serviceFlags, startBrowserTestService } from './helpers/service.ts'
import { distinctIdIn, flagsLoaded, flagsShownIn, openAndLoad } from './helpers/visitor.ts'
import type { PostHogWindow } from './helpers/visitor.ts'

type Props = Record<string, unknown>
const sdkVersion = (
  JSON.parse(readFileSync(createRequire(import.meta.url).resolve('posthog-js/package.json'), 'utf8')) as {
    version: string
  }
).version
const FLAG_KEYS = FLAG_DEFINITIONS.flags.map((f) => f.key)

describe('posthog-js in headless Chromium, on a page of another site than the service', () => {
  const browser = useBrowser()
  let t: TestService
  let site: TestSite
  /** In front of the service where the test must see requests Playwright does not report (beacons). */
  let proxy: ApiProxy
  before(async () => {
    ;[t, site] = await Promise.all([startBrowserTestService(), TestSite.start()])
    proxy = await ApiProxy.start(t.url)
  })
  after(async () => {
    await proxy?.close()
    await site?.close()
    await t?.close()
  })

  const eventOf = (name: string, distinctId: string) => async () =>
    (await storedEvents(t, `&event=${encodeURIComponent(name)}`)).find((e) => e.distinct_id === distinctId)

  for (const sdk of ['snippet', 'npm'] as SdkLoading[]) {
    describe(
      sdk === 'snippet'
        ? 'loaded by the HTML snippet from /static/array.js'
        : "bundled from `import posthog from 'posthog-js'`",
      () => {
        const pageUrl = (apiHost = t.url) => site.pageUrl({ sdk, token: t.project.api_token, apiHost })

        it('takes remote config and sends the automatic $pageview with $current_url, stored once', async () => {
          const { page, log } = await browser.newPage()
          const url = pageUrl()
          await openAndLoad(page, url)
          const distinctId = await distinctIdIn(page)
          const pageview = await eventually('the $pageview', eventOf('$pageview', distinctId))
          const properties = pageview.properties as Props
          expect(properties).to.include({
            $current_url: url,
            $lib: 'web',
            $lib_version: sdkVersion,
            $host: new URL(url).host,
            $pathname: '/page.html',
          })
          expect(properties.$session_id).to.be.a('string')
          expect(
            (await storedEvents(t, '&event=%24pageview')).filter((e) => e.distinct_id === distinctId),
          ).to.have.length(1)

          await log.settle() // a batch may still be in flight when its events are already stored
          const config = log.to(`/array/${t.project.api_token}/config`)
          expect(config.map((r) => [new URL(r.url).pathname, r.status, r.mode])).to.deep.equal([
            [`/array/${t.project.api_token}/config.js`, 200, 'cors'],
          ])
          const arrayJs = log.to('/static/array.js')
          expect(arrayJs.map((r) => [r.status, r.mode])).to.deep.equal(sdk === 'snippet' ? [[200, 'cors']] : [])
          // lazily loaded extensions come from the service too, and exist there
          for (const extension of log.to('/static/').filter((r) => !r.url.endsWith('/static/array.js')))
            expect(extension.status, extension.url).to.equal(200)
          const capture = log.requests.filter(
            (r) => r.method === 'POST' && /\/(e|i\/v0\/e)\/$/.test(new URL(r.url).pathname),
          )
          expect(capture).to.not.be.empty
          for (const request of capture)
            expect([request.status, request.contentType, request.gzip, request.mode]).to.deep.equal([
              200,
              'text/plain',
              true,
              'cors',
            ])
        })

        it('shows the flags the service computes for the visitor: boolean with payload, multivariate variant and payload, unmatched and inactive off', async () => {
          const { page, log } = await browser.newPage()
          await openAndLoad(page, pageUrl())
          await flagsLoaded(page)
          const distinctId = await distinctIdIn(page)
          const shown = await flagsShownIn(page, FLAG_KEYS)
          const computed = await serviceFlags(t, { distinct_id: distinctId })
          const expected = FLAG_KEYS.map((key) => {
            const flag = computed.flags[key]
            // posthog-js answers undefined for a flag the response leaves out (inactive) and for no payload
            const value = flag === undefined ? undefined : flag.enabled && (flag.variant ?? true)
            const payload = flag?.metadata?.payload ?? undefined
            return { key, value, payload: typeof payload === 'string' ? JSON.parse(payload) : payload }
          })
          expect(shown).to.deep.equal(expected)
          expect(shown.find((f) => f.key === 'beta-feature')).to.deep.equal({
            key: 'beta-feature',
            value: true,
            payload: { color: 'blue' },
          })
          const variant = shown.find((f) => f.key === 'multivariate-flag')!
          expect(variant.value).to.be.oneOf(['control', 'test'])
          expect(variant.payload).to.deep.equal({ variant: variant.value })
          expect(shown.find((f) => f.key === 'person-prop-flag')?.value).to.equal(false)
          expect(shown.find((f) => f.key === 'off-flag')?.value).to.equal(undefined)
          const flagsRequests = log.to('/flags/')
          await log.settle(flagsRequests)
          expect(flagsRequests.map((r) => [r.method, new URL(r.url).search, r.status, r.gzip])).to.deep.include([
            'POST',
            '?v=2',
            200,
            true,
          ])
        })

        it('stores a custom capture with its properties and the autocaptured click, each once', async () => {
          const { page } = await browser.newPage()
          await openAndLoad(page, pageUrl())
          const distinctId = await distinctIdIn(page)
          await page.evaluate(() =>
            (window as unknown as PostHogWindow).posthog.capture('purchase', {
              amount: 42,
              items: ['tea', 'cake'],
              gift: { wrapped: true },
            }),
          )
          await page.click('#buy')
          const purchase = await eventually('the purchase', eventOf('purchase', distinctId))
          expect(purchase.properties).to.deep.include({
            amount: 42,
            items: ['tea', 'cake'],
            gift: { wrapped: true },
            distinct_id: distinctId,
          })
          const click = await eventually('the autocaptured click', eventOf('$autocapture', distinctId))
          expect((click.properties as Props).$event_type).to.equal('click')
          expect(String((click.properties as Props).$elements_chain)).to.include('button')
          const mine = (await storedEvents(t)).filter((e) => e.distinct_id === distinctId)
          expect(mine.filter((e) => e.event === 'purchase')).to.have.length(1)
          expect(new Set(mine.map((e) => e.uuid)).size).to.equal(mine.length)
        })

        it('sends $pageleave by sendBeacon when the visitor navigates away, and it is stored', async () => {
          const { page } = await browser.newPage()
          const url = pageUrl(proxy.url)
          await openAndLoad(page, url)
          const distinctId = await distinctIdIn(page)
          await eventually('the $pageview', eventOf('$pageview', distinctId))
          const before = proxy.forwarded.length
          await page.click('#away')
          await page.waitForURL(`${site.origin}/away.html`)
          const leave = await eventually('the $pageleave', eventOf('$pageleave', distinctId))
          expect((leave.properties as Props).$current_url).to.equal(url)
          // Playwright does not report a beacon sent by a page being left; the proxy sees it
          const beacon = await eventually('the beacon answered', async () =>
            proxy.forwarded
              .slice(before)
              .find((r) => r.method === 'POST' && r.mode === 'no-cors' && r.status !== undefined),
          )
          expect([beacon.status, beacon.contentType, beacon.gzip]).to.deep.equal([200, 'text/plain', true])
        })
      },
    )
  }
})
