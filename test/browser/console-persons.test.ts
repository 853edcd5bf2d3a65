/**
 * The console's person search and person page in headless Chromium: persons made with posthog-node
 * (identify with an email, events with a group), found by email prefix and by distinct id, paged
 * with "More persons", opened, with the person's groups and their stored properties. Controls are
 * found by role and accessible name; the search is driven from the keyboard. Screenshots go to
 * .tmp/console-screenshots/ (git-ignored).
 */
import { expect } from 'chai'
import type { Page } from 'playwright-core'
import { PostHog } from 'posthog-node'
import { startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { useBrowser } from './helpers/chromium.ts'
import { consoleScreenshot, openConsoleTab } from './helpers/console.ts'
import { defaultPlugins, eventually } from './helpers/service.ts'

const XSS = '<img src=x onerror=alert(1)>'
const SHOPPERS = 30

describe('console: person search and a person page in headless Chromium', function () {
  this.timeout(90_000)
  const browser = useBrowser()
  let t: TestService
  let page: Page
  const dialogs: string[] = []

  before(async () => {
    t = await startTestService({ plugins: defaultPlugins() })
    const posthog = new PostHog(t.project.api_token, {
      host: t.url,
      flushAt: 1000,
      flushInterval: 0,
      fetchRetryCount: 0,
    })
    for (let i = 0; i < SHOPPERS; i++) {
      const id = `shopper-${String(i).padStart(2, '0')}`
      posthog.identify({
        distinctId: id,
        properties: { email: `tea-lover-${String(i).padStart(2, '0')}@shop.test`, name: `Shopper ${i}` },
      })
    }
    posthog.identify({ distinctId: 'markup', properties: { email: 'markup@shop.test', name: XSS } })
    posthog.groupIdentify({ groupType: 'company', groupKey: 'acme', properties: { industry: 'tea', motto: XSS } })
    posthog.capture({ distinctId: 'shopper-07', event: 'ordered tea', groups: { company: 'acme', team: 'kettles' } })
    await posthog.shutdown()
    await eventually('the persons and the grouped event', async () => {
      const found = await t.admin('GET', `/api/projects/${t.project.id}/persons?search=tea-lover&limit=100`)
      const events = await t.admin(
        'GET',
        `/api/projects/${t.project.id}/events?distinct_id=shopper-07&event=ordered%20tea`,
      )
      const persons = ((await found.json()) as { results: unknown[] }).results.length
      return persons === SHOPPERS && ((await events.json()) as { results: unknown[] }).results.length === 1
        ? true
        : undefined
    })
  })
  after(async () => {
    await t?.close()
  })

  async function open(route: string): Promise<void> {
    page = await openConsoleTab(browser, t, `/console/#${route}`, dialogs)
  }
  const screenshot = (name: string) => consoleScreenshot(page, name)
  const found = () => page.getByRole('table', { name: 'Persons found' })
  const foundIds = async () =>
    (await found().getByRole('rowheader').getByRole('link').allTextContents()).map((s) => s.trim())
  async function searchFor(text: string): Promise<void> {
    const box = page.getByRole('search', { name: 'Persons' }).getByRole('searchbox', { name: 'Search persons' })
    await box.fill(text)
    await box.press('Enter')
  }

  it('finds persons by email prefix, a page at a time with "More persons", from the keyboard', async () => {
    await open(`/projects/${t.project.id}`)
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Persons' }).click()
    await page.getByRole('heading', { level: 1, name: /^Persons of/ }).waitFor()
    await searchFor('tea-lover-')
    await page.getByRole('status').filter({ hasText: '25+ persons found' }).waitFor()
    expect(await foundIds()).to.deep.equal(
      Array.from({ length: 25 }, (_, i) => `shopper-${String(i).padStart(2, '0')}`),
    )
    const shopper3 = found()
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'shopper-03' }) })
    expect((await shopper3.getByRole('cell').allTextContents()).slice(0, 3)).to.deep.equal([
      'email',
      'tea-lover-03@shop.test',
      'Shopper 3',
    ])
    await screenshot('persons-search')
    const more = page.getByRole('button', { name: 'More persons' })
    await more.focus()
    await page.keyboard.press('Enter')
    await page
      .getByRole('status')
      .filter({ hasText: `${SHOPPERS} persons found` })
      .waitFor()
    expect(await foundIds()).to.have.length(SHOPPERS)
    expect(await more.count()).to.equal(0)
    // the keyboard goes on at the first person added, and Enter opens it
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Person of shopper-25' }).waitFor()
  })

  it('finds a person by distinct id, opens it and shows its groups with their stored properties as text', async () => {
    await open(`/projects/${t.project.id}/persons`)
    await searchFor('shopper-07')
    await page.getByRole('status').filter({ hasText: '1 person found' }).waitFor()
    const row = found()
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'shopper-07' }) })
    expect(await row.getByRole('cell').first().textContent()).to.equal('distinct_id')
    await found().getByRole('link', { name: 'shopper-07' }).click()
    await page.getByRole('heading', { name: 'Person of shopper-07' }).waitFor()
    const groups = page.getByRole('table', { name: 'Groups' })
    await groups.waitFor()
    const acme = groups.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'acme' }) })
    expect(await acme.getByRole('cell').first().textContent()).to.equal('company')
    await acme.getByText('2 properties').click()
    expect(await acme.locator('pre').textContent())
      .to.contain('"industry": "tea"')
      .and.contain(JSON.stringify(XSS))
    // a group never identified has no stored properties: type and key only
    const kettles = groups.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'kettles' }) })
    expect(await kettles.getByRole('cell').allTextContents()).to.deep.equal(['team', 'No stored properties.'])
    await screenshot('person-groups')
    expect(await page.locator('main img').count()).to.equal(0)

    // back to the search: the last one is shown again
    await page.getByRole('link', { name: 'Search persons' }).click()
    await page.getByRole('status').filter({ hasText: '1 person found' }).waitFor()
    expect(await page.getByRole('searchbox', { name: 'Search persons' }).inputValue()).to.equal('shopper-07')
    expect(dialogs).to.deep.equal([])
  })

  it('shows markup in a found person as text, and says when nothing matches', async () => {
    await open(`/projects/${t.project.id}/persons`)
    await searchFor('markup@')
    const row = found()
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'markup' }) })
    expect(await row.getByRole('cell').nth(2).textContent()).to.equal(XSS)
    expect(await page.locator('main img').count()).to.equal(0)
    await searchFor('nobody-is-called-this')
    await page.getByRole('status').filter({ hasText: 'No person found.' }).waitFor()
    expect(await found().count()).to.equal(0)
    expect(dialogs).to.deep.equal([])
  })
})
