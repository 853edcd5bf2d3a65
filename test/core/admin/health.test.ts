/**
 * GET /api/projects/:id/ingestion/health over real HTTP: events stored and dropped per minute over
 * the last hour and drops by reason, from the `ingestion_minutes` collection the pipeline counts
 * into, so the counts sum over processes and survive a restart.
 */
import { expect } from 'chai'
import { pino } from 'pino'
import { startTestService } from '../../helpers/service.ts'
import type { TestService } from '../../helpers/service.ts'
import { IngestionCounts, recordIngestion } from '../../../core/admin/health.ts'

type Json = Record<string, any>

describe('admin API: ingestion health', function () {
  this.timeout(30_000)
  let t: TestService
  before(async () => {
    t = await startTestService()
  })
  after(() => t.close())

  const health = async (projectId = t.project.id) =>
    (await (await t.admin('GET', `/api/projects/${projectId}/ingestion/health`)).json()) as Json

  it('counts stored and dropped events of the current minute, and drops by reason', async () => {
    const response = await fetch(`${t.url}/batch`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        api_key: t.project.api_token,
        batch: [
          { event: 'kept', distinct_id: 'a' },
          { event: 'kept', distinct_id: 'b' },
          { event: 'no id' },
          { distinct_id: 'c' },
          { distinct_id: 'd' },
        ],
      }),
    })
    expect(response.status).to.equal(200)
    const body = await health()
    expect(body.window_minutes).to.equal(60)
    expect(body.minutes).to.have.length(60)
    expect(body.totals).to.deep.equal({ stored: 2, dropped: 3 })
    expect(body.drops_by_reason).to.deep.equal([
      { reason: 'missing_event_name', count: 2 },
      { reason: 'missing_distinct_id', count: 1 },
    ])
    // the request's minute: the last one, or the one before when the minute turned since
    const counted = body.minutes.flatMap((m: Json, index: number) => (m.stored || m.dropped ? [{ ...m, index }] : []))
    expect(counted).to.have.length(1)
    expect(counted[0]).to.include({ stored: 2, dropped: 3 })
    expect(counted[0].index).to.be.at.least(58)
  })

  it('sums what several processes counted into one minute, and leaves out minutes over an hour old', async () => {
    const db = t.service.storage.db
    const project = (await (await t.admin('POST', '/api/projects', { name: 'sums' })).json()) as Json
    const logger = pino({ level: 'silent' })
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000)
    // what two workers would write at the same time, racing to create the minute's document
    await Promise.all([
      recordIngestion(db, logger, project.id, { stored: 5, drops: new Map([['a.b', 1]]) }, tenMinutesAgo),
      recordIngestion(db, logger, project.id, { stored: 7, drops: new Map([['$x', 2]]) }, tenMinutesAgo),
      recordIngestion(db, logger, project.id, { stored: 100, drops: new Map() }, new Date(Date.now() - 61 * 60_000)),
    ])
    const body = await health(project.id)
    expect(body.totals).to.deep.equal({ stored: 12, dropped: 3 })
    expect(body.drops_by_reason).to.deep.equal([
      { reason: '_x', count: 2 },
      { reason: 'a_b', count: 1 },
    ])
    expect(body.minutes.filter((m: Json) => m.stored > 0)).to.have.length(1)
  })

  it("gathers a process's counts in memory and writes each project and minute once per flush", async () => {
    const db = t.service.storage.db
    const project = (await (await t.admin('POST', '/api/projects', { name: 'gathered' })).json()) as Json
    const counts = new IngestionCounts(db, pino({ level: 'silent' }))
    const minutes = db.collection('ingestion_minutes')
    for (let i = 0; i < 50; i++) counts.add(project.id, { stored: 2, drops: new Map([['invalid', 1]]) })
    expect(await minutes.countDocuments({ project_id: project.id }), 'nothing written per request').to.equal(0)
    await counts.close()
    const written = await minutes.find({ project_id: project.id }).toArray()
    expect(written.map((doc) => [doc.stored, doc.dropped, doc.drops])).to.deep.equal([[100, 50, { invalid: 50 }]])
  })

  it('answers 404 for an unknown project and 401 without the admin key', async () => {
    expect((await t.admin('GET', '/api/projects/999999/ingestion/health')).status).to.equal(404)
    expect((await fetch(`${t.url}/api/projects/${t.project.id}/ingestion/health`)).status).to.equal(401)
  })
})
