/**
 * Settings of queue mode (`mode: "queue"`): where the NATS JetStream servers are, how the ingest
 * stream is laid out, and how workers consume it. See docs/queue-mode.md.
 */
import { Type } from 'typebox'
import type { Static } from 'typebox'
import { natsConnectionFields } from '../nats.ts'

export const QueueSettingsSchema = Type.Object(
  {
    /** What this node does: `capture` publishes, `worker` consumes and runs the hook chain, `both` does both. */
    role: Type.Union([Type.Literal('capture'), Type.Literal('worker'), Type.Literal('both')], { default: 'capture' }),
    ...natsConnectionFields,
    /** The ingest stream (work-queue retention: a message leaves it once a worker acknowledged it). */
    stream: Type.String({ pattern: '^[A-Za-z0-9_-]+$', default: 'HEDGEROW_INGEST' }),
    /** Subjects are `<prefix>.<project id>.<partition>`. */
    subjectPrefix: Type.String({ pattern: '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$', default: 'hedgerow.ingest' }),
    /** Events of one distinct_id always land in the same partition; a partition has one consumer at a time. Fixed once events were published. */
    partitions: Type.Integer({ minimum: 1, maximum: 1024, default: 16 }),
    /** Stream replicas in a NATS cluster (1 on a single server). */
    replicas: Type.Integer({ minimum: 1, maximum: 5, default: 1 }),
    /** A retried request inside this window is published once (JetStream message-id deduplication). */
    duplicateWindowMs: Type.Integer({ minimum: 1000, default: 120_000 }),
    /** How long capture waits for JetStream to acknowledge a publish before answering 503. */
    publishTimeoutMs: Type.Integer({ minimum: 1, default: 5000 }),
    /** Events a worker runs through the hook chain at once, per partition. */
    batchSize: Type.Integer({ minimum: 1, maximum: 10_000, default: 200 }),
    /** A message not acknowledged this long after delivery is delivered again. */
    ackWaitMs: Type.Integer({ minimum: 1000, default: 60_000 }),
    /** A worker that stops renewing its partition leases for this long loses them to the others, who wait as long again before consuming (a batch must finish within it). */
    leaseTtlMs: Type.Integer({ minimum: 500, default: 15_000 }),
    /** Wait before a partition whose batch failed (a required sink down, say) is consumed again. */
    retryDelayMs: Type.Integer({ minimum: 1, default: 1000 }),
  },
  { additionalProperties: false, default: {} },
)

export type QueueSettings = Static<typeof QueueSettingsSchema>
