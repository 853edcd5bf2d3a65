/**
 * Capture side of queue mode: the events of a request go onto the ingest stream, and the request
 * is answered only once JetStream acknowledged every one of them (stored, with its replicas).
 * An event without a uuid gets one here, as PostHog's capture does, so that a redelivered
 * message is the same event to the worker and the (project, uuid) index stores it once.
 */
import type { IngestRequest } from '../pipeline.ts'
import { canonicalUuid, isUuid, uuidv7 } from '../capture/uuid.ts'
import { httpError } from '../errors.ts'
import { count } from '../metrics.ts'
import type { QueueConnection } from './connection.ts'
import { encodeQueuedEvent, partitionOf, subjectOf } from './message.ts'

export class QueuePublisher {
  constructor(private readonly queue: QueueConnection) {}

  async ingest(request: IngestRequest): Promise<{ published: number }> {
    const { js, settings } = this.queue
    const projectId = request.project.id
    const acks = request.events.map((raw) => {
      const event = typeof raw.uuid === 'string' && raw.uuid !== '' ? raw : { ...raw, uuid: uuidv7(request.receivedAt) }
      const uuid = event.uuid as string
      const data = encodeQueuedEvent({
        projectId,
        receivedAt: request.receivedAt,
        sentAt: request.sentAt,
        ip: request.ip,
        historicalMigration: request.historicalMigration,
        event,
      })
      return js.publish(subjectOf(settings.subjectPrefix, projectId, partitionOf(event, settings.partitions)), data, {
        // JetStream drops a message id it saw inside the duplicate window: an SDK retry is queued once
        msgID: isUuid(uuid) ? `${projectId}:${canonicalUuid(uuid)}` : undefined,
        expect: { streamName: settings.stream },
        timeout: settings.publishTimeoutMs,
      })
    })
    const results = await Promise.allSettled(acks)
    const failed = results.find((r) => r.status === 'rejected')
    if (failed)
      throw httpError(
        'unavailable',
        `the ingest queue did not acknowledge the events (${(failed.reason as Error).message}); retry the request`,
      )
    count('hedgerow_events_queued_total', {}, acks.length)
    return { published: acks.length }
  }
}
