/**
 * The ingestion health page's dead letters, paged on the server, in headless Chromium: more dead
 * letters than a page (45, made in one batch, so many share a creation time and the cursor must
 * break ties), read by clicking "Older dead letters" until it is gone. Every dead letter shows
 * once, in the order the API lists them (newest first). Controls are found by role and accessible
 * name. The screenshot goes to .tmp/console-screenshots/ like the other console pages'.
 */
import { expect } from 'chai'
import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { builtInPlugins } from '../../plugins/index.ts'
import { BROKEN_EVENT, brokenStep } from '../helpers/broken-step.ts'
import { startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { useBrowser } from './helpers/chromium.ts'
import { consoleScreenshot, openConsoleTab } from './helpers/console.ts'
import { defaultPlugins } from './helpers/service.ts'

/** The console asks for 20 a page (health.js); 45 makes two full pages and a part. */
const PAGE = 20
const LETTERS = 45

describe('operator console: older dead letters, paged on the server, in headless Chromium', function () {
  this.timeout(60_000)
  const browser = useBrowser()
  let t: TestService
  let page: Page
  const uuids = Array.from({ length: LETTERS }, () => randomUUID())

  before(async () => {
    brokenStep.broken = true
    const plugins = defaultPlugins()
    plugins.splice(
      plugins.findIndex((entry) => entry.plugin === 'sink-mongo'),
      0,
      { plugin: 'broken-step' },
    )
    t = await startTestService({ plugins }, { builtIns: { ...builtInPlugins, 'broken-step': brokenStep.plugin } })
    const response = await fetch(`${t.url}/batch`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        api_key: t.project.api_token,
        batch: uuids.map((uuid, n) => ({ event: BROKEN_EVENT, uuid, distinct_id: 'buyer', properties: { n } })),
      }),
    })
    expect(response.status).to.equal(200)
  })
  after(() => t?.close())

  /** The uuids of the dead letters the page shows, from each row's raw event, in table order. */
  async function shownUuids(): Promise<string[]> {
    const rows = page.getByRole('table', { name: 'Dead letters' }).locator('tbody').getByRole('row')
    const raw = await rows.locator('pre').allTextContents()
    return raw.map((text) => (JSON.parse(text) as { uuid: string }).uuid)
  }

  it('shows older dead letters page by page, each once, and no button after the last page', async () => {
    const listed = (await (await t.admin('GET', `/api/projects/${t.project.id}/dead_letters?limit=500`)).json()) as {
      results: Array<{ uuid: string }>
    }
    const newestFirst = listed.results.map((letter) => letter.uuid)
    expect([...newestFirst].sort()).to.deep.equal([...uuids].sort())

    page = await openConsoleTab(browser, t, `/console/#/projects/${t.project.id}/health`)
    await page.getByRole('heading', { level: 1, name: 'Ingestion health of test project' }).waitFor()
    const table = page.getByRole('table', { name: 'Dead letters' })
    const older = page.getByRole('button', { name: 'Older dead letters' })
    const rows = table.locator('tbody').getByRole('row')
    await rows.first().waitFor()
    expect(await shownUuids()).to.deep.equal(newestFirst.slice(0, PAGE))

    await older.click()
    await rows.nth(2 * PAGE - 1).waitFor()
    expect(await shownUuids()).to.deep.equal(newestFirst.slice(0, 2 * PAGE))

    await older.click()
    await rows.nth(LETTERS - 1).waitFor()
    await older.waitFor({ state: 'detached' })
    const shown = await shownUuids()
    expect(shown).to.deep.equal(newestFirst)
    expect(new Set(shown).size).to.equal(LETTERS)
    // the last one's replay button is named by its place in the whole list
    await page.getByRole('button', { name: `Replay dead letter ${BROKEN_EVENT} ${LETTERS}`, exact: true }).waitFor()
    await consoleScreenshot(page, 'ingestion-health-dead-letters')
  })
})
