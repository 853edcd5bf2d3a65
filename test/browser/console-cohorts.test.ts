/**
 * The console's page of one cohort in headless Chromium: editing it, adding and removing members
 * of a static cohort (checked through /flags?v=2, as an SDK sees it), the flags that use it, and
 * deleting it after a confirmation. Controls are found by role and accessible name.
 */
import { expect } from 'chai'
import type { Page } from 'playwright-core'
import { startTestService } from '../helpers/service.ts'
import type { TestService } from '../helpers/service.ts'
import { useBrowser } from './helpers/chromium.ts'
import { openConsoleTab } from './helpers/console.ts'
import { defaultPlugins, eventually, personOf, serviceFlags } from './helpers/service.ts'

type Json = Record<string, any>

describe('operator console: a cohort page in headless Chromium', function () {
  this.timeout(60_000)
  const browser = useBrowser()
  let t: TestService
  let page: Page
  let beta: Json
  let pro: Json
  let flag: Json

  const cohortsPath = () => `/api/projects/${t.project.id}/cohorts/`
  const adminJson = async (method: string, p: string, body?: unknown) => {
    const response = await t.admin(method, p, body)
    expect(response.status, `${method} ${p}`).to.be.oneOf([200, 201])
    return (await response.json()) as Json
  }
  const inBeta = async (distinctId: string) =>
    (await serviceFlags(t, { distinct_id: distinctId })).flags['beta-feature']?.enabled

  before(async () => {
    t = await startTestService({ plugins: defaultPlugins() })
    // static membership counts for stored persons (as /flags reads it), so these visitors send an event first
    const visitors = ['beta-1', 'beta-2', 'beta-4']
    const sent = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        api_key: t.project.api_token,
        batch: visitors.map((id) => ({ event: 'signed_up', distinct_id: id, properties: {} })),
      }),
    })
    expect(sent.status).to.equal(200)
    for (const id of visitors) await eventually(`person ${id}`, () => personOf(t, id))
    beta = await adminJson('POST', cohortsPath(), { name: 'Beta testers', is_static: true, distinct_ids: ['beta-1'] })
    pro = await adminJson('POST', cohortsPath(), {
      name: 'Pro users',
      filters: {
        properties: { type: 'AND', values: [{ type: 'person', key: 'plan', operator: 'exact', value: ['pro'] }] },
      },
    })
    flag = await adminJson('POST', `/api/projects/${t.project.id}/feature_flags/`, {
      key: 'beta-feature',
      filters: { groups: [{ properties: [{ type: 'cohort', key: 'id', value: beta.id }], rollout_percentage: 100 }] },
    })
  })
  after(() => t?.close())

  async function open(route: string) {
    page = await openConsoleTab(browser, t, `/console/#${route}`)
  }
  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name })

  it('opens a cohort from the list, renames it (sending its version) and lists the flags using it', async () => {
    await open(`/projects/${t.project.id}/cohorts`)
    await page.getByRole('table', { name: 'Cohorts' }).getByRole('link', { name: 'Beta testers' }).click()
    await heading('Cohort Beta testers').waitFor()
    const usedBy = page.getByRole('list', { name: 'Flags using this cohort' })
    // the page loads the flag list on its own after the cohort: wait for it, as a person would
    await usedBy.waitFor()
    expect(await usedBy.getByRole('link').allTextContents()).to.deep.equal(['beta-feature'])
    expect(await usedBy.getByRole('link', { name: 'beta-feature' }).getAttribute('href')).to.equal(
      `#/projects/${t.project.id}/flags/${flag.id}`,
    )

    await page.getByLabel('Cohort name').fill('Early adopters')
    await page.getByRole('button', { name: 'Save cohort' }).click()
    await heading('Cohort Early adopters').waitFor()
    const stored = await adminJson('GET', `${cohortsPath()}${beta.id}/`)
    expect(stored).to.include({ name: 'Early adopters', version: beta.version + 1 })

    // the link leads to the flag editor
    await usedBy.getByRole('link', { name: 'beta-feature' }).click()
    await heading('Flag beta-feature').waitFor()
  })

  it('refuses an edit made against an older version instead of overwriting it', async () => {
    await open(`/projects/${t.project.id}/cohorts/${beta.id}`)
    await heading('Cohort Early adopters').waitFor()
    const current = await adminJson('GET', `${cohortsPath()}${beta.id}/`)
    await adminJson('PATCH', `${cohortsPath()}${beta.id}/`, { name: 'Renamed elsewhere', version: current.version })
    await page.getByLabel('Cohort name').fill('Mine')
    await page.getByRole('button', { name: 'Save cohort' }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: /Not saved: .*changed meanwhile/ })
      .waitFor()
    expect((await adminJson('GET', `${cohortsPath()}${beta.id}/`)).name).to.equal('Renamed elsewhere')
  })

  it('adds members from a pasted list and a CSV file, and /flags answers true for a new member; removes one', async () => {
    await open(`/projects/${t.project.id}/cohorts/${beta.id}`)
    await heading(/^Cohort /).waitFor()
    expect(await inBeta('beta-2')).to.equal(false)
    const ids = page.getByLabel('Distinct ids to add or remove, one per line (or comma-separated)')
    await ids.fill('beta-2\nbeta-3, beta-1')
    await page.getByRole('status').filter({ hasText: '3 distinct ids entered' }).waitFor()
    await page.getByRole('button', { name: 'Add members' }).click()
    await page.getByRole('status').filter({ hasText: 'Added 2 new member(s).' }).waitFor()
    await page.getByRole('heading', { level: 2, name: 'Members (3)' }).waitFor()
    expect(await inBeta('beta-2')).to.equal(true)

    await page.getByLabel('Or read them from a CSV file').setInputFiles({
      name: 'more.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('distinct_id\r\n"beta-4"\r\n'),
    })
    await page.getByRole('status').filter({ hasText: '1 distinct id entered' }).waitFor()
    await page.getByRole('button', { name: 'Add members' }).click()
    await page.getByRole('heading', { level: 2, name: 'Members (4)' }).waitFor()
    const members = page.getByRole('list', { name: 'Members' })
    await members.getByText('beta-4', { exact: true }).waitFor()
    expect(await members.getByRole('listitem').allTextContents()).to.have.members([
      'beta-1',
      'beta-2',
      'beta-3',
      'beta-4',
    ])
    expect(await inBeta('beta-4')).to.equal(true)

    await ids.fill('beta-2')
    await page.getByRole('button', { name: 'Remove members' }).click()
    await page.getByRole('heading', { level: 2, name: 'Members (3)' }).waitFor()
    await eventually('beta-2 out of the cohort', async () => ((await inBeta('beta-2')) === false ? true : undefined))
  })

  it("edits a cohort's property filters with the flag editor's filter rows", async () => {
    await open(`/projects/${t.project.id}/cohorts/${pro.id}`)
    await heading('Cohort Pro users').waitFor()
    await page.getByRole('paragraph').filter({ hasText: 'No flag uses this cohort.' }).waitFor()
    const filter = page.getByRole('group', { name: 'Filter 1' })
    await filter.getByLabel('Values, one per line').fill('pro\nteam')
    await page.getByRole('button', { name: 'Save cohort' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved: version 1.' }).waitFor()
    const stored = await adminJson('GET', `${cohortsPath()}${pro.id}/`)
    expect(stored.filters.properties.values).to.deep.equal([
      { type: 'person', key: 'plan', operator: 'exact', value: ['pro', 'team'] },
    ])
  })

  it('deletes a cohort only after the confirmation, and the flag using it stops matching through it', async () => {
    await open(`/projects/${t.project.id}/cohorts/${beta.id}`)
    await heading(/^Cohort /).waitFor()
    expect(await inBeta('beta-1')).to.equal(true)
    await page.getByRole('button', { name: 'Delete cohort' }).click()
    const dialog = page.getByRole('dialog', { name: /^Delete / })
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'detached' })
    expect((await t.admin('GET', `${cohortsPath()}${beta.id}/`)).status).to.equal(200)

    // the delete names the version the page read: after a change elsewhere it is refused
    const current = await adminJson('GET', `${cohortsPath()}${beta.id}/`)
    await adminJson('PATCH', `${cohortsPath()}${beta.id}/`, {
      description: 'changed elsewhere',
      version: current.version,
    })
    await page.getByRole('button', { name: 'Delete cohort' }).click()
    await dialog.getByRole('button', { name: 'Delete cohort' }).click()
    await dialog
      .getByRole('alert')
      .filter({ hasText: /changed meanwhile/ })
      .waitFor()
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect((await t.admin('GET', `${cohortsPath()}${beta.id}/`)).status).to.equal(200)

    await page.reload()
    await heading(/^Cohort /).waitFor()
    await page.getByRole('button', { name: 'Delete cohort' }).click()
    await dialog.getByRole('button', { name: 'Delete cohort' }).click()
    await heading(/^Cohorts of/).waitFor()
    const list = (await adminJson('GET', cohortsPath())).results as Json[]
    expect(list.map((c) => c.id)).to.not.include(beta.id)
    expect(await inBeta('beta-1')).to.equal(false)
  })
})
