import { expect } from 'chai'
import { applyRules } from '../../../plugins/validate/rules.ts'
import { isDropped } from '../../../core/plugin-api.ts'
import type { Dropped, EventContext, IngestEvent } from '../../../core/plugin-api.ts'
import { sampleContext } from '../../helpers/hooks.ts'

const options = { maxEventNameLength: 200 }
const event = (over: Partial<IngestEvent> = {}): IngestEvent => ({
  uuid: '',
  event: 'e',
  distinctId: 'd',
  properties: {},
  timestamp: new Date('2026-01-01T00:00:00Z'),
  ...over,
})
function contextWith(over: Partial<EventContext> = {}): EventContext & { warnings: string[] } {
  const warnings: string[] = []
  return { ...sampleContext(), warn: (type: string) => void warnings.push(type), ...over, warnings }
}
const kept = (result: IngestEvent | Dropped): IngestEvent => {
  if (isDropped(result)) throw new Error(`dropped: ${result.reason}`)
  return result
}

describe('validate rules', () => {
  it('drops an event with no name, no distinct id or an invalid uuid, with the warning type', () => {
    expect(applyRules(event({ event: '' }), contextWith(), options)).to.include({ reason: 'missing_event_name' })
    expect(applyRules(event({ distinctId: '' }), contextWith(), options)).to.include({ reason: 'missing_distinct_id' })
    expect(applyRules(event({ uuid: 'not-a-uuid' }), contextWith(), options)).to.include({
      reason: 'skipping_event_invalid_uuid',
    })
  })

  it('keeps a valid client uuid and makes a UUIDv7 from the event time otherwise', () => {
    expect(
      kept(applyRules(event({ uuid: '01890000-0000-7000-8000-000000000001' }), contextWith(), options)).uuid,
    ).to.equal('01890000-0000-7000-8000-000000000001')
    const made = kept(applyRules(event(), contextWith(), options)).uuid
    expect(made).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(parseInt(made.replace(/-/g, '').slice(0, 12), 16)).to.equal(Date.parse('2026-01-01T00:00:00Z'))
  })

  it('cuts event names to 200 characters (Unicode characters, not bytes)', () => {
    expect([...kept(applyRules(event({ event: 'é'.repeat(300) }), contextWith(), options)).event]).to.have.length(200)
  })

  it('sets $ip from the client address unless the event has one, and $sent_at from sent_at', () => {
    const sentAt = new Date('2026-01-01T00:00:05Z')
    const result = kept(applyRules(event(), contextWith({ ip: '203.0.113.9', sentAt }), options))
    expect(result.properties).to.include({ $ip: '203.0.113.9', $sent_at: sentAt.toISOString() })
    expect(
      kept(applyRules(event({ properties: { $ip: '198.51.100.1' } }), contextWith({ ip: '203.0.113.9' }), options))
        .properties.$ip,
    ).to.equal('198.51.100.1')
  })

  it('lower-cases a UUID $session_id', () => {
    const result = kept(
      applyRules(
        event({ properties: { $session_id: '0190A000-0000-7000-8000-0000000000AB' } }),
        contextWith(),
        options,
      ),
    )
    expect(result.properties.$session_id).to.equal('0190a000-0000-7000-8000-0000000000ab')
  })

  it('marks $process_person_profile: false events personless and drops person events sent that way', () => {
    expect(
      kept(applyRules(event({ properties: { $process_person_profile: false } }), contextWith(), options)).personless,
    ).to.equal(true)
    for (const name of ['$identify', '$create_alias', '$merge_dangerously', '$groupidentify']) {
      expect(
        applyRules(event({ event: name, properties: { $process_person_profile: false } }), contextWith(), options),
      ).to.include({ reason: 'invalid_event_when_process_person_profile_is_false' })
    }
    const ctx = contextWith()
    expect(
      kept(applyRules(event({ properties: { $process_person_profile: 'no' } }), ctx, options)).personless,
    ).to.equal(false)
    expect(ctx.warnings).to.deep.equal(['invalid_process_person_profile'])
  })

  it('drops survey events without $survey_id', () => {
    for (const name of ['survey sent', 'survey shown', 'survey dismissed']) {
      expect(applyRules(event({ event: name }), contextWith(), options)).to.include({ reason: 'missing_survey_id' })
      expect(
        kept(applyRules(event({ event: name, properties: { $survey_id: 's1' } }), contextWith(), options)).event,
      ).to.equal(name)
    }
  })

  it('keeps the historical mark only on events at least 48 hours old', () => {
    const receivedAt = new Date('2026-01-10T00:00:00Z')
    const ctx = contextWith({ historicalMigration: true, receivedAt })
    expect(
      kept(applyRules(event({ timestamp: new Date('2026-01-01T00:00:00Z') }), ctx, options)).historicalMigration,
    ).to.equal(true)
    expect(
      kept(applyRules(event({ timestamp: new Date('2026-01-09T12:00:00Z') }), ctx, options)).historicalMigration,
    ).to.equal(false)
  })
})
