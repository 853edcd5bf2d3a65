/**
 * The per-event rules of the service contract (design.md §1, capture.md §1.6–§1.8, §2.2a, §2.3):
 * what drops an event, and the normalisation every kept event gets before enrichment.
 */
import type { Dropped, EventContext, IngestEvent } from '../../core/plugin-api.ts'
import { drop, copyRecord, isUuid, uuidv7, withFields } from '../../core/plugin-api.ts'

export interface ValidateOptions {
  readonly maxEventNameLength: number
}

/** Events that make no sense without a person; dropped when person processing is off (capture.md §2.3). */
const PERSON_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$groupidentify'])
const HISTORICAL_MIN_AGE_MS = 48 * 3600 * 1000
/** Survey events are meaningless without the survey they answer (issue 5, "Survey events"). */
const SURVEY_EVENTS = new Set(['survey sent', 'survey shown', 'survey dismissed'])

export function applyRules(event: IngestEvent, ctx: EventContext, options: ValidateOptions): IngestEvent | Dropped {
  if (!event.event) return drop('missing_event_name', { reason: 'the event has no name (or it is not a string)' })
  if (!event.distinctId) return drop('missing_distinct_id', { reason: 'the event has no distinct_id, or it is empty' })
  if (event.uuid && !isUuid(event.uuid)) return drop('skipping_event_invalid_uuid', { uuid: event.uuid })

  if (SURVEY_EVENTS.has(event.event) && !event.properties.$survey_id)
    return drop('missing_survey_id', { event: event.event })

  const properties = copyRecord(event.properties)
  const personless = personProcessing(properties, ctx) === false
  if (personless && PERSON_EVENTS.has(event.event))
    return drop('invalid_event_when_process_person_profile_is_false', { event: event.event })

  if (!properties.$ip && ctx.ip) properties.$ip = ctx.ip
  if (ctx.sentAt) properties.$sent_at = isoString(ctx.sentAt)
  if (typeof properties.$session_id === 'string' && isUuid(properties.$session_id))
    properties.$session_id = properties.$session_id.toLowerCase()

  return withFields(event, {
    event: cutName(event.event, options.maxEventNameLength),
    uuid: event.uuid || uuidv7(event.timestamp),
    properties,
    personless,
    historicalMigration: ctx.historicalMigration && isOldEnough(event.timestamp, ctx.receivedAt),
  })
}

/** The first `max` code points; a name of at most `max` UTF-16 units has no more code points than that. */
function cutName(name: string, max: number): string {
  return name.length <= max ? name : [...name].slice(0, max).join('')
}

/** The events of a request share one sent_at: format it once, not once per event. */
let lastSentAt: { date: Date; time: number; iso: string } | undefined
function isoString(date: Date): string {
  if (lastSentAt?.date !== date || lastSentAt.time !== date.getTime())
    lastSentAt = { date, time: date.getTime(), iso: date.toISOString() }
  return lastSentAt.iso
}

/** `$process_person_profile`: false disables, true or absent enables, anything else is warned about. */
function personProcessing(properties: Record<string, unknown>, ctx: EventContext): boolean {
  const flag = properties.$process_person_profile
  if (flag === false) return false
  if (flag !== undefined && flag !== true) ctx.warn('invalid_process_person_profile', { value: flag })
  return true
}

/** A historical event newer than 48 h, or in the future, loses the mark (capture.md §1.12). */
function isOldEnough(timestamp: Date, now: Date): boolean {
  return now.getTime() - timestamp.getTime() >= HISTORICAL_MIN_AGE_MS
}
