import assert from 'node:assert/strict'
import { toLines } from '../src/index.js'

describe('toLines', () => {
  it('writes one JSON line per event with the stored-event field names', () => {
    const timestamp = new Date('2026-01-02T03:04:05.678Z')
    const project = { id: 7, name: 'p', apiToken: 'phc_x', secretApiToken: 'phs_x', timezone: 'UTC' }
    const events = [{ uuid: 'u1', event: 'a\nb', distinctId: 'd1', properties: { $browser: 'Firefox' }, timestamp }]
    const text = toLines({ project, events, receivedAt: timestamp, historicalMigration: false })
    assert.equal(text.split('\n').length, 2)
    assert.deepEqual(JSON.parse(text), {
      uuid: 'u1',
      event: 'a\nb',
      distinct_id: 'd1',
      project_id: 7,
      timestamp: '2026-01-02T03:04:05.678Z',
      properties: { $browser: 'Firefox' },
    })
  })
})
