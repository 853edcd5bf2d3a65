/** The stored event document (capture.md §2.12): what the admin API and queries read back. */
import { BSON } from 'mongodb'
import type { IngestEvent, SinkBatch } from '../../core/plugin-api.ts'
import { HttpError } from '../../core/plugin-api.ts'

/** MongoDB's limit on one document (every server's `maxBsonObjectSize`); the driver refuses a larger one before sending anything. */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
/** The `_id` the driver adds to a document that has none: type byte, `_id` and its NUL, 12 bytes of ObjectId. */
const OBJECT_ID_BYTES = 1 + 4 + 12

export interface EventDocument {
  project_id: number
  uuid: string
  event: string
  distinct_id: string
  properties: Record<string, unknown>
  timestamp: Date
  /** When the service received the event. The retention TTL counts from here. */
  created_at: Date
  person_id?: string
  person_properties?: Record<string, unknown>
  person_created_at?: Date
  person_mode: 'full' | 'propertyless' | 'force_upgrade'
  historical_migration?: true
}

export function toDocument(event: Readonly<IngestEvent>, batch: SinkBatch): EventDocument {
  const doc: EventDocument = {
    project_id: batch.project.id,
    uuid: event.uuid,
    event: event.event,
    distinct_id: event.distinctId,
    properties: event.properties,
    timestamp: event.timestamp,
    created_at: batch.receivedAt,
    person_mode: event.person?.mode ?? (event.personless ? 'propertyless' : 'full'),
  }
  if (event.person) {
    doc.person_id = event.person.id
    doc.person_properties = event.person.properties
    doc.person_created_at = event.person.createdAt
  }
  if (event.historicalMigration) doc.historical_migration = true
  return doc
}

/** The size of `doc` as the driver sends it (with the `_id` it adds to a document without one). */
export function documentBytes(doc: EventDocument): number {
  return BSON.calculateObjectSize(doc) + ((doc as { _id?: unknown })._id === undefined ? OBJECT_ID_BYTES : 0)
}

/**
 * A 413 for the first of `docs` the database cannot store, or undefined when each fits. The
 * capture limit on one event (server.eventLimitBytes) keeps the built-in steps far below this;
 * a raised limit or a plugin that adds to events can reach it.
 */
export function tooLargeToStore(docs: readonly EventDocument[]): HttpError | undefined {
  for (const doc of docs) {
    const bytes = measurable(doc)
    if (bytes === undefined || bytes < MAX_DOCUMENT_BYTES) continue
    return new HttpError(
      413,
      'validation_error',
      'event_too_large',
      `maximum event size exceeded: event ${doc.uuid} would be stored as ${bytes} bytes (its properties and person_properties together); the database stores at most ${MAX_DOCUMENT_BYTES - 1} bytes per event`,
    )
  }
  return undefined
}

/** documentBytes, or undefined for a document that cannot be measured (a cycle overflows the stack): not a size problem. */
function measurable(doc: EventDocument): number | undefined {
  try {
    return documentBytes(doc)
  } catch {
    return undefined
  }
}
