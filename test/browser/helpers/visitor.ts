/**
 * Driving posthog-js in a page: open the test page and wait until the SDK has loaded, then call it
 * as the site's own code would. Types come from posthog-js; the calls run inside the browser.
 */
import type { Page } from 'playwright-core'
import type { PostHog } from 'posthog-js'

export interface PostHogWindow {
  posthog: PostHog
  __posthogLoaded?: boolean
}

export async function openAndLoad(page: Page, url: string): Promise<void> {
  await page.goto(url)
  await page.waitForFunction(() => (window as unknown as PostHogWindow).__posthogLoaded === true, undefined, {
    timeout: 10_000,
  })
}

export function distinctIdIn(page: Page): Promise<string> {
  return page.evaluate(() => (window as unknown as PostHogWindow).posthog.get_distinct_id())
}

/** Resolves once posthog-js has flags from /flags (at once when it already has). */
export function flagsLoaded(page: Page): Promise<void> {
  return page.evaluate(
    () =>
      new Promise<void>((resolve) => void (window as unknown as PostHogWindow).posthog.onFeatureFlags(() => resolve())),
  )
}

export interface ShownFlag {
  key: string
  value: string | boolean | undefined
  payload: unknown
}

/** What the page's code sees for each flag: getFeatureFlag and getFeatureFlagPayload. */
export function flagsShownIn(page: Page, keys: string[]): Promise<ShownFlag[]> {
  return page.evaluate((flagKeys) => {
    const posthog = (window as unknown as PostHogWindow).posthog
    return flagKeys.map((key) => ({
      key,
      value: posthog.getFeatureFlag(key),
      payload: posthog.getFeatureFlagPayload(key),
    }))
  }, keys)
}

/** Waits (in the page) until getFeatureFlag(key) is `value`: flags reload asynchronously after identify or group. */
export async function waitForFlag(page: Page, key: string, value: string | boolean): Promise<void> {
  await page.waitForFunction(
    ([k, v]) => (window as unknown as PostHogWindow).posthog.getFeatureFlag(k as string) === v,
    [key, value] as const,
    { timeout: 10_000 },
  )
}
