/**
 * Dead letters over real HTTP: a plugin that throws on a step whose policy is fail dead-letters an
 * event for real; the admin API lists it (paged, newest first, with the raw event and the failing
 * plugin, hook and error) and, once the plugin is "fixed", replays it: stored once however often
 * it is replayed (the sinks' (project, uuid) key), marked replayed, recorded in the audit log.
 */
import { expect } from 'chai'
import { startTestService, storedEvents } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { builtInPlugins } from '../../../plugins/index.ts'
import { BROKEN_EVENT, brokenStep } from '../../helpers/broken-step.ts'

type Json = Record<string, any>

describe('admin API: dead letters and their replay', function () {
  this.timeout(30_000)
  let t: TestService

  before(async () => {
    brokenStep.broken = true
    t = await startTestService(
      {
        plugins: [
          { plugin: 'validate' },
          { plugin: 'persons' },
          { plugin: 'broken-step' },
          { plugin: 'sink-mongo', required: true },
        ],
      },
      { builtIns: { ...builtInPlugins, 'broken-step': brokenStep.plugin } },
    )
  })
  after(() => t.close())

  const capture = (batch: Json[]) =>
    fetch(`${t.url}/batch`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: t.project.api_token, batch }),
    })
  const letters = async (query = '') =>
    (await (await t.admin('GET', `/api/projects/${t.project.id}/dead_letters${query}`)).json()) as Json
  const replay = (id: string) => t.admin('POST', `/api/projects/${t.project.id}/dead_letters/${id}/replay`)

  it('keeps a failing event aside with its raw event, plugin, hook and error, and acknowledges the request', async () => {
    const response = await capture([
      // no uuid: the dead letter fixes one, so that replays store the event once
      { event: BROKEN_EVENT, distinct_id: 'buyer-1', properties: { cart: '<img src=x onerror=alert(1)>' } },
      { event: 'fine', distinct_id: 'buyer-1', properties: {} },
    ])
    expect(response.status).to.equal(200)
    const { results, next } = await letters()
    expect(next).to.equal(null)
    expect(results).to.have.length(1)
    const [letter] = results
    expect(letter).to.include({ plugin: 'broken-step', hook: 'personUpdate', replayed_at: null, replay_count: 0 })
    expect(letter.error).to.match(/cannot parse the cart/)
    expect(letter.event).to.deep.include({ event: BROKEN_EVENT, distinct_id: 'buyer-1' })
    expect(letter.uuid).to.match(/^[0-9a-f-]{36}$/)
    expect((await storedEvents(t)).map((e) => e.event)).to.deep.equal(['fine'])
  })

  it('pages newest first with a cursor, without skipping or repeating', async () => {
    for (const n of [1, 2, 3]) await capture([{ event: BROKEN_EVENT, distinct_id: `pager-${n}` }])
    const first = await letters('?limit=2')
    expect(first.results.map((l: Json) => l.event.distinct_id)).to.deep.equal(['pager-3', 'pager-2'])
    expect(first.next).to.be.a('string')
    const second = (await (
      await fetch(first.next, { headers: { Authorization: `Bearer ${t.adminKey}` } })
    ).json()) as Json
    expect(second.results.map((l: Json) => l.event.distinct_id)).to.deep.equal(['pager-1', 'buyer-1'])
    expect(second.next).to.equal(null)
    const bad = await t.admin('GET', `/api/projects/${t.project.id}/dead_letters?cursor=nonsense`)
    expect(bad.status).to.equal(400)
    expect(await bad.json()).to.include({ attr: 'cursor' })
    expect((await t.admin('GET', `/api/projects/${t.project.id}/dead_letters?limit=0`)).status).to.equal(400)
  })

  it('answers 409 to a replay while the cause is not fixed, and keeps the dead letter as it was', async () => {
    const [letter] = (await letters('?limit=500')).results.filter((l: Json) => l.event.distinct_id === 'buyer-1')
    const response = await replay(letter.id)
    expect(response.status).to.equal(409)
    expect((await response.json()).detail).to.match(/still fails: .*cannot parse the cart/)
    const again = (await letters('?limit=500')).results
    expect(again.filter((l: Json) => l.event.distinct_id === 'buyer-1')).to.deep.equal([letter])
  })

  it('once fixed, stores a replayed event once even when replayed twice, marks it and audits it', async () => {
    brokenStep.broken = false
    const [letter] = (await letters('?limit=500')).results.filter((l: Json) => l.event.distinct_id === 'buyer-1')
    const first = await replay(letter.id)
    expect(first.status).to.equal(200)
    const body = (await first.json()) as Json
    expect(body.outcome).to.deep.equal({ stored: 1, dropped: 0 })
    expect(body.dead_letter).to.include({ id: letter.id, replay_count: 1 })
    expect(body.dead_letter.replayed_at).to.be.a('string')
    expect((await replay(letter.id)).status).to.equal(200)
    const stored = (await storedEvents(t)).filter((e) => e.event === BROKEN_EVENT)
    expect(stored).to.have.length(1)
    expect(stored[0]).to.include({ uuid: letter.uuid, distinct_id: 'buyer-1' })
    expect(stored[0]!.properties).to.include({ cart: '<img src=x onerror=alert(1)>' })
    const after = (await letters('?limit=500')).results.find((l: Json) => l.id === letter.id)
    expect(after).to.include({ replay_count: 2 })
    const audit = (await (
      await t.admin('GET', `/api/projects/${t.project.id}/audit?entity_type=dead_letter&entity_id=${letter.id}`)
    ).json()) as Json
    expect(audit.results).to.have.length(2)
    expect(audit.results[0]).to.deep.include({ action: 'replayed', actor: { key_label: 'admin' } })
    expect(audit.results[0].details).to.include({ uuid: letter.uuid, plugin: 'broken-step', stored: 1 })
  })

  it('stores the event once when two replays of it race', async () => {
    const [letter] = (await letters('?limit=500')).results.filter((l: Json) => l.event.distinct_id === 'pager-2')
    const answers = await Promise.all([replay(letter.id), replay(letter.id)])
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200])
    expect((await storedEvents(t)).filter((e) => e.distinct_id === 'pager-2')).to.have.length(1)
  })

  it('answers 404 for an unknown dead letter or one of another project, and 401 without the admin key', async () => {
    expect((await replay('0123456789abcdef01234567')).status).to.equal(404)
    expect((await replay('not-an-id')).status).to.equal(404)
    const other = (await (await t.admin('POST', '/api/projects', { name: 'other' })).json()) as Json
    const [letter] = (await letters()).results
    expect((await t.admin('POST', `/api/projects/${other.id}/dead_letters/${letter.id}/replay`)).status).to.equal(404)
    expect((await fetch(`${t.url}/api/projects/${t.project.id}/dead_letters`)).status).to.equal(401)
    const unauthenticated = await fetch(`${t.url}/api/projects/${t.project.id}/dead_letters/${letter.id}/replay`, {
      method: 'POST',
    })
    expect(unauthenticated.status).to.equal(401)
  })
})
