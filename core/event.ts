/**
 * The mechanical first form of an event: the client's fields mapped onto `IngestEvent` with the
 * sanitising of capture.md §2.2a. Rules that can drop an event belong to the `validate` step.
 */
import type { IngestEvent, WireEvent } from './plugin-api.ts'
import { uuidv7, withFields } from './plugin-api.ts'
import { distinctIdOf } from './capture/distinct-id.ts'
import { computeTimestamp } from './capture/timestamp.ts'
import { canonicalUuid } from './capture/uuid.ts'

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export function fromWire(raw: WireEvent, request: { receivedAt: Date; sentAt?: Date }): IngestEvent {
  const properties: Json = isObject(raw.properties) ? { ...raw.properties } : {}
  // posthog-js sends $set / $set_once at the top level of $identify; the top level wins over properties
  for (const key of ['$set', '$set_once'] as const) {
    const top = raw[key]
    if (isObject(top)) properties[key] = { ...(isObject(properties[key]) ? properties[key] : {}), ...top }
  }
  return {
    uuid: typeof raw.uuid === 'string' ? canonicalUuid(raw.uuid) : '',
    event: typeof raw.event === 'string' ? raw.event : '',
    distinctId: distinctIdOf(raw),
    properties,
    timestamp: computeTimestamp({
      timestamp: raw.timestamp,
      offset: raw.offset,
      sentAt: request.sentAt,
      now: request.receivedAt,
      ignoreSentAt: properties.$ignore_sent_at === true,
    }),
  }
}

/**
 * A rule that must always run, so the core applies it rather than a step: an event the steps kept
 * reaches the sinks with a uuid, its own or a UUIDv7 of its timestamp. The validate step makes
 * one, but a replacement may not, and the sinks' unique (project, uuid) key would then store only
 * one of the uuid-less events.
 */
export function withUuid(event: IngestEvent): IngestEvent {
  return event.uuid ? event : withFields(event, { uuid: uuidv7(event.timestamp) })
}
