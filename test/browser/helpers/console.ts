/**
 * What the console's browser suites share: a tab signed in the way the sign-in page leaves it (the
 * admin key in that tab's sessionStorage), whose alert and confirm dialogs are recorded and
 * dismissed, and the folder of screenshots a reviewer looks at (not committed).
 */
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { ROOT_DIR } from '../../helpers/service.ts'
import type { BrowserHandle } from './chromium.ts'

export const CONSOLE_SCREENSHOTS = path.join(ROOT_DIR, '.tmp/console-screenshots')

export async function openConsoleTab(
  browser: BrowserHandle,
  service: { url: string; adminKey: string },
  route: string,
  dialogs?: string[],
): Promise<Page> {
  const { page } = await browser.newPage()
  if (dialogs)
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
  await page.addInitScript((key) => sessionStorage.setItem('hedgerow.adminKey', key), service.adminKey)
  await page.goto(`${service.url}${route}`)
  return page
}

export async function consoleScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(CONSOLE_SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: path.join(CONSOLE_SCREENSHOTS, `${name}.png`), fullPage: true })
}
