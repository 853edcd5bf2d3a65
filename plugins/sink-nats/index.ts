/**
 * sink-nats: publishes every kept event to a NATS JetStream stream, one message per event (the
 * stored-event document as JSON) on a subject per project and event name. A batch resolves only
 * when JetStream has acknowledged every message, so it is stored by the stream (with its
 * replicas) before the request answers 200. The message id is `<project>:<uuid>`: JetStream drops
 * a retried event inside the stream's duplicate window, so an SDK retry is stored once.
 */
import type { JetStreamClient } from 'nats'
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import type { SinkBatch } from '../../core/plugin-api.ts'
import { natsConnectionFields, toDocument } from '../../core/plugin-api.ts'
import { ensureStream } from './stream.ts'
import { subjectTemplate } from './subject.ts'
import type { SubjectTemplate } from './subject.ts'

export const optionsSchema = Type.Object(
  {
    ...natsConnectionFields,
    /** Stream the events are published to (checked with every publish). */
    stream: Type.String({ pattern: '^[A-Za-z0-9_-]+$', default: 'HEDGEROW_EVENTS' }),
    /** Subject of an event; placeholders {project} (the id) and {event} (the name, percent-encoded where NATS needs it). */
    subject: Type.String({ minLength: 1, default: 'hedgerow.events.{project}.{event}' }),
    /** Create the stream at boot when missing (file storage, capturing the subject with `*` for each placeholder). */
    createStream: Type.Boolean({ default: true }),
    /** Duplicate window of a stream created here: a retried event inside it is stored once. */
    duplicateWindowMs: Type.Integer({ minimum: 1000, default: 120_000 }),
    /** How long to wait for one publish acknowledgement. */
    ackTimeoutMs: Type.Integer({ minimum: 1, default: 5000 }),
    /** Messages awaiting acknowledgement at once, per batch. */
    maxPendingAcks: Type.Integer({ minimum: 1, default: 1024 }),
  },
  { additionalProperties: false },
)

interface Publisher {
  readonly js: JetStreamClient
  readonly stream: string
  readonly subject: SubjectTemplate
  readonly ackTimeoutMs: number
  readonly maxPendingAcks: number
}

const encoder = new TextEncoder()

async function publishBatch(p: Publisher, batch: SinkBatch): Promise<void> {
  const { events } = batch
  let next = 0
  // A bounded number of publishes awaiting their acks; the first failure fails the batch.
  async function lane(): Promise<void> {
    while (next < events.length) {
      const event = events[next++]
      const data = encoder.encode(JSON.stringify(toDocument(event, batch)))
      const subject = p.subject.fill({ project: batch.project.id, event: event.event })
      await p.js.publish(subject, data, {
        msgID: `${batch.project.id}:${event.uuid}`,
        expect: { streamName: p.stream },
        timeout: p.ackTimeoutMs,
      })
    }
  }
  await Promise.all(Array.from({ length: Math.min(p.maxPendingAcks, events.length) }, lane))
}

export default definePlugin({
  name: 'sink-nats',
  apiVersion: API_VERSION,
  optionsSchema,
  async setup(api, options) {
    const subject = subjectTemplate(options.subject)
    const connection = await api.connectNats(options, `hedgerow ${api.id}`)
    const { nc } = connection
    try {
      await ensureStream(
        await nc.jetstreamManager({ timeout: options.connectTimeoutMs }),
        options.stream,
        subject.filter,
        options,
      )
    } catch (error) {
      await nc.close()
      throw error
    }
    const publisher: Publisher = {
      js: nc.jetstream({ timeout: options.ackTimeoutMs }),
      stream: options.stream,
      subject,
      ackTimeoutMs: options.ackTimeoutMs,
      maxPendingAcks: options.maxPendingAcks,
    }
    api.hooks.sink.tapPromise({ name: api.id }, function publishEvents(batch) {
      return publishBatch(publisher, batch)
    })
    api.logger.info(
      { server: nc.getServer(), stream: options.stream, subject: options.subject },
      'sink-nats publishing',
    )
    // Publishes still in flight are awaited; a server that stays unreachable must not hold up shutdown.
    return function closeConnection() {
      return connection.close(options.ackTimeoutMs)
    }
  },
})
