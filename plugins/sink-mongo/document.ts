/** The stored event document (capture.md §2.12): what the admin API and queries read back. */
import type { IngestEvent, SinkBatch } from '../../core/plugin-api.ts'

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
