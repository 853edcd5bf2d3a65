import { expect } from 'chai'
import { randomUUID } from 'node:crypto'
import { storedEvents } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { useBrowser } from './helpers/chromium.ts'
import { TestSite } from './helpers/pages.ts'
import { eventually, groupOf, personOf, startBrowserTestService } from './helpers/service.ts'
import type { StoredPerson } from './helpers/service.ts'
import { distinctIdIn, flagsLoaded, openAndLoad, waitForFlag } from './helpers/visitor.ts'
import type { PostHogWindow } from './helpers/visitor.ts'

type Props = Record<string, unknown>

describe('posthog-js persons and groups in headless Chromium, stored by the service', () => {
  const browser = useBrowser()
  let t: TestService
  let site: TestSite
  before(async () => {
    ;[t, site] = await Promise.all([startBrowserTestService(), TestSite.start()])
  })
  after(async () => {
    await site?.close()
    await t?.close()
  })

  const pageUrl = () => site.pageUrl({ sdk: 'snippet', token: t.project.api_token, apiHost: t.url })
  const userId = () => `user-${randomUUID().slice(0, 8)}`
  /** The stored person of `distinctId` once `ready` holds for it. */
  const personWhen = (distinctId: string, ready: (p: StoredPerson) => boolean) =>
    eventually(`the person of ${distinctId}`, async () => {
      const person = await personOf(t, distinctId)
      return person && ready(person) ? person : undefined
    })

  it('identify merges the anonymous visitor into the identified person: one person, both distinct ids, $set and $set_once applied', async () => {
    const { page } = await browser.newPage()
    await openAndLoad(page, pageUrl())
    const anonymous = await distinctIdIn(page)
    await page.evaluate(() => (window as unknown as PostHogWindow).posthog.capture('browsed', { shelf: 'teas' }))
    await eventually('the anonymous event', async () =>
      (await storedEvents(t, '&event=browsed')).find((e) => e.distinct_id === anonymous),
    )
    const user = userId()
    await page.evaluate(
      (id) =>
        (window as unknown as PostHogWindow).posthog.identify(
          id,
          { email: `${id}@example.com`, plan: 'pro' },
          { first_seen_page: 'landing' },
        ),
      user,
    )

    // the merge and the property update are two writes of one request: wait for both
    const person = await personWhen(user, (p) => p.distinct_ids.includes(anonymous) && p.properties.email !== undefined)
    expect(person.distinct_ids).to.have.members([anonymous, user])
    expect(person.properties).to.include({ email: `${user}@example.com`, plan: 'pro', first_seen_page: 'landing' })
    expect(person.is_identified).to.equal(true)
    expect((await personOf(t, anonymous))?.id).to.equal(person.id)
    const identify = await eventually('the $identify', async () =>
      (await storedEvents(t, '&event=%24identify')).find((e) => e.distinct_id === user),
    )
    expect((identify.properties as Props).$anon_distinct_id).to.equal(anonymous)

    // the same user in another browser: $set_once keeps the first value, and flags read the stored person
    const other = await browser.newPage()
    await openAndLoad(other.page, pageUrl())
    await other.page.evaluate(
      (id) => (window as unknown as PostHogWindow).posthog.identify(id, {}, { first_seen_page: 'pricing' }),
      user,
    )
    // the event is stored after every person step has run for it
    await eventually(
      'the second $identify stored',
      async () =>
        (await storedEvents(t, '&event=%24identify')).filter((e) => e.distinct_id === user).length === 2 || undefined,
    )
    const merged = (await personOf(t, user))!
    expect(merged.distinct_ids).to.have.length(3)
    expect(merged.id).to.equal(person.id)
    expect(merged.properties.first_seen_page).to.equal('landing')
    await waitForFlag(other.page, 'person-prop-flag', true)
  })

  it('setPersonProperties updates the stored person, and flags follow the stored properties', async () => {
    const { page } = await browser.newPage()
    await openAndLoad(page, pageUrl())
    const user = userId()
    await page.evaluate((id) => (window as unknown as PostHogWindow).posthog.identify(id), user)
    await personWhen(user, () => true)
    await page.evaluate(() =>
      (window as unknown as PostHogWindow).posthog.setPersonProperties(
        { plan: 'pro', seats: 5 },
        { signup_source: 'ad' },
      ),
    )
    const person = await personWhen(user, (p) => p.properties.plan === 'pro')
    expect(person.properties).to.include({ plan: 'pro', seats: 5, signup_source: 'ad' })
    const set = await eventually('the $set', async () =>
      (await storedEvents(t, '&event=%24set')).find((e) => e.distinct_id === user),
    )
    expect((set.properties as Props).$set).to.include({ plan: 'pro', seats: 5 })

    const other = await browser.newPage()
    await openAndLoad(other.page, pageUrl())
    await other.page.evaluate((id) => (window as unknown as PostHogWindow).posthog.identify(id), user)
    await waitForFlag(other.page, 'person-prop-flag', true)
  })

  it('alias adds the alias to the identified person', async () => {
    const { page } = await browser.newPage()
    await openAndLoad(page, pageUrl())
    const user = userId()
    await page.evaluate((id) => (window as unknown as PostHogWindow).posthog.identify(id), user)
    await personWhen(user, () => true)
    const alias = `alias-${user}`
    await page.evaluate((id) => (window as unknown as PostHogWindow).posthog.alias(id), alias)
    const person = await personWhen(user, (p) => p.distinct_ids.includes(alias))
    expect((await personOf(t, alias))?.id).to.equal(person.id)
    const created = await eventually('the $create_alias', async () =>
      (await storedEvents(t, '&event=%24create_alias')).find((e) => e.distinct_id === user),
    )
    expect((created.properties as Props).alias).to.equal(alias)
  })

  it('group stores the group with its properties, tags later events, and group flags are evaluated from the request and from storage', async () => {
    const { page } = await browser.newPage()
    await openAndLoad(page, pageUrl())
    await flagsLoaded(page)
    expect(
      await page.evaluate(() => (window as unknown as PostHogWindow).posthog.getFeatureFlag('group-flag')),
    ).to.equal(false)
    const key = `acme-${randomUUID().slice(0, 8)}`
    await page.evaluate(
      (k) => (window as unknown as PostHogWindow).posthog.group('company', k, { industry: 'tech', name: 'Acme' }),
      key,
    )
    await waitForFlag(page, 'group-flag', true)
    const group = await eventually('the group', () => groupOf(t, 'company', key))
    expect(group.group_properties).to.include({ industry: 'tech', name: 'Acme' })

    const distinctId = await distinctIdIn(page)
    await page.evaluate(() => (window as unknown as PostHogWindow).posthog.capture('ordered'))
    const ordered = await eventually('the grouped event', async () =>
      (await storedEvents(t, '&event=ordered')).find((e) => e.distinct_id === distinctId),
    )
    expect((ordered.properties as Props).$groups).to.deep.equal({ company: key })

    // another visitor joins the group without its properties: the flag comes from the stored group
    const other = await browser.newPage()
    await openAndLoad(other.page, pageUrl())
    await flagsLoaded(other.page)
    await other.page.evaluate((k) => (window as unknown as PostHogWindow).posthog.group('company', k), key)
    await waitForFlag(other.page, 'group-flag', true)
  })
})
