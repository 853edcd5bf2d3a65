/**
 * The console's flag list with 1,000 flags, in headless Chromium: the browser asks for one page
 * at a time (counted with playwright's request events, with their sizes), the table holds one page
 * of rows, the search is answered by the service, the pager works from the keyboard, and a flag on
 * a later page is disabled there. The time from navigation to the table is printed (a figure for
 * docs/console.md), with one generous bound so that a regression to something absurd fails.
 */
import { expect } from 'chai'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { ROOT_DIR, startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { useBrowser } from './helpers/chromium.ts'
import { defaultPlugins } from './helpers/service.ts'

const SCREENSHOTS = path.join(ROOT_DIR, '.tmp/console-screenshots')
const FLAGS = 1000
/** The console's page size (plugins/console/public/pages/flags.js). */
const PAGE_SIZE = 50
const keyOf = (i: number) => `scale-flag-${String(i).padStart(4, '0')}`

interface FlagRow {
  id: number
  key: string
  active: boolean
}

describe('console: the flag list with 1,000 flags in headless Chromium', function () {
  this.timeout(120_000)
  const browser = useBrowser()
  let t: TestService
  let page: Page
  /** The flag list requests the page made: their query and the size of the answer. */
  let listRequests: Array<{ url: URL; bytes: number }>

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    t = await startTestService({ plugins: defaultPlugins() })
    const flags = Array.from({ length: FLAGS }, (_, i) => ({
      id: i + 1,
      key: keyOf(i + 1),
      name: `Scale flag number ${i + 1}`,
      active: true,
      filters: {
        groups: [
          { properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['pro'] }], rollout_percentage: 30 },
        ],
      },
    }))
    const started = Date.now()
    const put = await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, {
      flags,
      group_type_mapping: {},
      cohorts: {},
    })
    expect(put.status, await put.clone().text()).to.equal(200)
    console.log(`      ${FLAGS} flags imported in ${Date.now() - started} ms`)
  })
  after(async () => {
    if (!t) return // skipped: no Chromium on this machine
    await t.close()
  })

  /** The page of the flag list the service answers at `offset` (what the console must show). */
  async function servicePage(offset: number, search = ''): Promise<{ count: number; results: FlagRow[] }> {
    const query = `limit=${PAGE_SIZE}&offset=${offset}&search=${encodeURIComponent(search)}`
    const response = await t.admin('GET', `/api/projects/${t.project.id}/feature_flags/?${query}`)
    expect(response.status).to.equal(200)
    return (await response.json()) as { count: number; results: FlagRow[] }
  }

  /** Opens the flag list; `fakeClock` installs playwright's clock first, so the page's timers run only when told. */
  async function openFlags({ fakeClock = false } = {}): Promise<number> {
    ;({ page } = await browser.newPage())
    if (fakeClock) {
      await page.clock.install()
      await page.clock.pauseAt(Date.now() + 1000)
    }
    listRequests = []
    page.on('response', async (response) => {
      const url = new URL(response.url())
      if (!/\/feature_flags\/$/.test(url.pathname) || response.request().method() !== 'GET') return
      const entry = { url, bytes: -1 }
      listRequests.push(entry)
      entry.bytes = (await response.body().catch(() => Buffer.alloc(0))).length
    })
    await page.addInitScript((key) => sessionStorage.setItem('hedgerow.adminKey', key), t.adminKey)
    const started = Date.now()
    await page.goto(`${t.url}/console/#/projects/${t.project.id}/flags`)
    if (fakeClock) await stepClockUntil(async () => (await table().getByRole('link').count()) > 0, 100)
    await table().getByRole('link').first().waitFor()
    return Date.now() - started
  }

  /**
   * On the paused clock, moves the page's frames and timers 10 ms at a time (with real time in
   * between for the network) until `done`, using at most `budgetMs` of the page's time.
   */
  async function stepClockUntil(done: () => Promise<boolean>, budgetMs: number): Promise<void> {
    for (let ms = 0; ms < budgetMs && !(await done()); ms += 10) {
      await page.clock.runFor(10)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(await done(), `reached within ${budgetMs} ms of the page's time`).to.equal(true)
  }

  const table = () => page.getByRole('table', { name: 'Feature flags' })
  const shownKeys = async () => (await table().getByRole('rowheader').allInnerTexts()).map((s) => s.trim())
  const listStatus = (text: string | RegExp) => page.getByRole('status').filter({ hasText: text })
  /** Waits until the list requests the page made have all been answered and read. */
  async function settledRequests() {
    for (let i = 0; i < 100 && listRequests.some((r) => r.bytes < 0); i++) await page.waitForTimeout(20)
    return listRequests
  }

  it('shows the first page of 1,000 flags, asking the service for that page only', async () => {
    const ms = await openFlags()
    const first = await servicePage(0)
    await listStatus(`${FLAGS} flags`).waitFor()
    expect(await shownKeys()).to.deep.equal(first.results.map((f) => f.key))
    expect(await table().locator('tbody').getByRole('row').count()).to.equal(PAGE_SIZE)
    const requests = await settledRequests()
    expect(requests, 'flag list requests').to.have.length(1)
    expect(requests[0].url.searchParams.get('limit')).to.equal(String(PAGE_SIZE))
    const bytes = requests[0].bytes
    console.log(`      navigation to the table of ${FLAGS} flags: ${ms} ms; one page of ${PAGE_SIZE}: ${bytes} bytes`)
    // one page of these flags is ~30 KB; the whole list would be twenty times that
    expect(bytes).to.be.below(100_000)
    expect(ms, 'navigation to the table (ms)').to.be.below(5_000)
    await page.screenshot({ path: path.join(SCREENSHOTS, 'flags-1000.png'), fullPage: true })
  })

  it('shows a flag made after the 1,000 others at the top of the first page', async () => {
    const made = await t.admin('POST', `/api/projects/${t.project.id}/feature_flags/`, { key: 'made-last' })
    expect(made.status).to.equal(201)
    await openFlags()
    await listStatus(`${FLAGS + 1} flags`).waitFor()
    expect((await shownKeys())[0]).to.equal('made-last')
    const deleted = await t.admin(
      'DELETE',
      `/api/projects/${t.project.id}/feature_flags/${((await made.json()) as FlagRow).id}/`,
    )
    expect(deleted.status).to.equal(204)
  })

  it('finds one flag among the 1,000 by its key, the search answered by the service', async () => {
    await openFlags()
    const wanted = keyOf(777)
    await page.getByLabel('Search flags').fill(wanted.toUpperCase())
    await listStatus(`1 flag matching “${wanted.toUpperCase()}”`).waitFor()
    expect(await shownKeys()).to.deep.equal([wanted])
    const searched = (await settledRequests()).filter((r) => r.url.searchParams.get('search'))
    // typed at once: the debounce asks once for the whole text, not once per keystroke
    expect(searched.map((r) => r.url.searchParams.get('search'))).to.deep.equal([wanted.toUpperCase()])
    expect(searched[0].bytes).to.be.below(5_000)
  })

  it('pages forward and back from the keyboard, one request per page', async () => {
    await openFlags()
    const next = page.getByRole('button', { name: 'Next page' })
    await next.focus()
    for (const offset of [PAGE_SIZE, 2 * PAGE_SIZE]) {
      await page.keyboard.press('Enter')
      await page.getByText(`${offset + 1}–${offset + PAGE_SIZE} of ${FLAGS}`).waitFor()
      expect(await shownKeys()).to.deep.equal((await servicePage(offset)).results.map((f) => f.key))
    }
    // the focus stays on the pager across pages, so Enter again goes on
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).to.equal('Next page')
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Enter')
    await page.getByText(`${PAGE_SIZE + 1}–${2 * PAGE_SIZE} of ${FLAGS}`).waitFor()
    // back on the first page "Previous page" can do nothing, and keeps the focus: Tab goes on to "Next page"
    await page.keyboard.press('Enter')
    await page.getByText(`1–${PAGE_SIZE} of ${FLAGS}`).waitFor()
    const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim())
    expect(await focused()).to.equal('Previous page')
    await page.keyboard.press('Enter')
    await page.keyboard.press('Tab')
    expect(await focused()).to.equal('Next page')
    await page.keyboard.press('Enter')
    await page.getByText(`${PAGE_SIZE + 1}–${2 * PAGE_SIZE} of ${FLAGS}`).waitFor()
    const offsets = (await settledRequests()).map((r) => Number(r.url.searchParams.get('offset')))
    expect(offsets).to.deep.equal([0, PAGE_SIZE, 2 * PAGE_SIZE, PAGE_SIZE, 0, PAGE_SIZE])
    expect(await table().locator('tbody').getByRole('row').count()).to.equal(PAGE_SIZE)
  })

  it('shows the page last asked for when an earlier answer arrives after it', async () => {
    await openFlags()
    // the answer for the second page is held back until the third page has been shown
    let releaseSecond: () => void = () => undefined
    const secondHeld = new Promise<void>((resolve) => (releaseSecond = resolve))
    await page.route(
      (url) => url.pathname.endsWith('/feature_flags/') && url.searchParams.get('offset') === String(PAGE_SIZE),
      async (route) => (await secondHeld, route.continue()),
    )
    const next = page.getByRole('button', { name: 'Next page' })
    await next.click()
    await page.waitForTimeout(100)
    await next.click()
    await page.getByText(`${2 * PAGE_SIZE + 1}–${3 * PAGE_SIZE} of ${FLAGS}`).waitFor()
    const third = (await servicePage(2 * PAGE_SIZE)).results.map((f) => f.key)
    await page.waitForFunction((key) => document.querySelector('tbody th')?.textContent?.trim() === key, third[0])
    releaseSecond()
    for (let i = 0; i < 100 && (await settledRequests()).length < 3; i++) await page.waitForTimeout(20)
    await page.waitForTimeout(300)
    expect(await page.getByText(`${2 * PAGE_SIZE + 1}–${3 * PAGE_SIZE} of ${FLAGS}`).count()).to.equal(1)
    expect(await shownKeys()).to.deep.equal(third)
  })

  it('keeps the page asked for right after the list opened (the search delay does not send it back)', async () => {
    // the search box waits 250 ms after a keystroke; here no timer runs until the clock is moved
    await openFlags({ fakeClock: true })
    await page.getByRole('button', { name: 'Next page' }).click()
    const second = page.getByText(`${PAGE_SIZE + 1}–${2 * PAGE_SIZE} of ${FLAGS}`)
    await stepClockUntil(async () => (await second.count()) > 0, 100)
    await page.clock.runFor(1000)
    await page.waitForTimeout(300)
    expect(await page.getByText(`${PAGE_SIZE + 1}–${2 * PAGE_SIZE} of ${FLAGS}`).count()).to.equal(1)
    expect(await shownKeys()).to.deep.equal((await servicePage(PAGE_SIZE)).results.map((f) => f.key))
    expect((await settledRequests()).map((r) => Number(r.url.searchParams.get('offset')))).to.deep.equal([0, PAGE_SIZE])
  })

  it('disables a flag on a later page and stays on that page', async () => {
    await openFlags()
    for (let i = 0; i < 3; i++) {
      await page.getByRole('button', { name: 'Next page' }).click()
      await page.getByText(`${(i + 1) * PAGE_SIZE + 1}–${(i + 2) * PAGE_SIZE} of ${FLAGS}`).waitFor()
    }
    const flag = (await servicePage(3 * PAGE_SIZE)).results[7]
    expect(flag.active).to.equal(true)
    await page.getByRole('button', { name: `Disable ${flag.key}` }).click()
    const dialog = page.getByRole('dialog', { name: `Disable ${flag.key}?` })
    await dialog.getByRole('button', { name: 'Disable flag' }).click()
    await page.getByRole('button', { name: `Enable ${flag.key}` }).waitFor()
    await page.getByText(`${3 * PAGE_SIZE + 1}–${4 * PAGE_SIZE} of ${FLAGS}`).waitFor()
    const stored = (await (
      await t.admin('GET', `/api/projects/${t.project.id}/feature_flags/${flag.id}/`)
    ).json()) as FlagRow
    expect(stored.active).to.equal(false)
    // and back on, from the same page
    await page.getByRole('button', { name: `Enable ${flag.key}` }).click()
    await page
      .getByRole('dialog', { name: `Enable ${flag.key}?` })
      .getByRole('button', { name: 'Enable flag' })
      .click()
    await page.getByRole('button', { name: `Disable ${flag.key}` }).waitFor()
    const again = (await (
      await t.admin('GET', `/api/projects/${t.project.id}/feature_flags/${flag.id}/`)
    ).json()) as FlagRow
    expect(again.active).to.equal(true)
    for (const r of await settledRequests()) expect(r.url.searchParams.get('limit')).to.equal(String(PAGE_SIZE))
  })
})
