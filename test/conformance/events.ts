/**
 * The events the conformance suite sends, and the one shape it compares stored events in: a sink
 * reads back what it wrote and maps it to `StoredEvent`, so any storage format can be checked.
 */
import type { IngestEvent, SinkBatch } from '../../core/plugin-api.ts'
import { uuidv7 } from '../../core/capture/uuid.ts'

/** One stored event as the suite compares it. */
export interface StoredEvent {
  uuid: string
  event: string
  distinctId: string
  projectId: number
  /** ISO 8601 with milliseconds (`Date#toISOString`). */
  timestamp: string
  properties: Record<string, unknown>
}

/** What a client sends in a `/batch/` body. */
export interface WireEvent {
  event: string
  distinct_id: string
  uuid: string
  timestamp: string
  properties: Record<string, unknown>
}

let sequence = 0

/** Events whose property names and values are hostile to naive storage: `$`, dots, unicode, nesting. */
export function wireEvents(count: number, label: string): WireEvent[] {
  const base = Date.now() - 60_000
  return Array.from({ length: count }, (_, i) => {
    sequence += 1
    const at = new Date(base + sequence)
    return {
      event: i % 3 === 0 ? '$pageview' : i % 3 === 1 ? `conformance ${label}` : 'a.b c*>',
      distinct_id: `${label}-user-${i % 7}`,
      uuid: uuidv7(at),
      timestamp: at.toISOString(),
      properties: {
        $browser: 'Firefox',
        'dotted.name': i,
        nested: { list: [1, 'two', null, { deep: true }], empty: {} },
        unicode: 'ünïcödé ✓ 𝄞',
        quote: 'line\nbreak "quoted" \\ back',
        sequence,
      },
    }
  })
}

/** The standard event document's JSON (sink-mongo's shape, which the built-in sinks write) → StoredEvent. */
export function toStoredEvent(document: Readonly<Record<string, unknown>>): StoredEvent {
  return {
    uuid: String(document.uuid),
    event: String(document.event),
    distinctId: String(document.distinct_id),
    projectId: Number(document.project_id),
    timestamp: new Date(document.timestamp as string | Date).toISOString(),
    properties: JSON.parse(JSON.stringify(document.properties ?? {})) as Record<string, unknown>,
  }
}

/** What the pipeline handed the sinks, in the shape the suite compares. */
export function storedFromIngest(event: Readonly<IngestEvent>, batch: SinkBatch): StoredEvent {
  return {
    uuid: event.uuid,
    event: event.event,
    distinctId: event.distinctId,
    projectId: batch.project.id,
    timestamp: event.timestamp.toISOString(),
    properties: JSON.parse(JSON.stringify(event.properties)) as Record<string, unknown>,
  }
}

/** Freezes a value and everything reachable from it, so a sink that writes to it throws. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  Object.freeze(value)
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<string | symbol, unknown>)[key])
  return value
}
