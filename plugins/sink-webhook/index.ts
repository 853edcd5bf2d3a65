/**
 * sink-webhook: POSTs kept events as JSON batches to a URL, signed with HMAC-SHA256, with a timeout
 * per attempt, retries with exponential backoff, and a bounded queue (see queue.ts for what a
 * required and an optional instance acknowledge). Redirects are not followed and the response is
 * read only up to a bound (see post.ts). Body:
 * `{"delivery_id": "<uuid, the same on every retry>", "sent_at": "<ISO>", "events": [<stored-event documents>]}`.
 */
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import { toDocument } from '../../core/plugin-api.ts'
import { postOnce } from './post.ts'
import { DeliveryQueue } from './queue.ts'

export const optionsSchema = Type.Object(
  {
    url: Type.String({ pattern: '^https?://[^\\s]+$' }),
    /** Key of the HMAC-SHA256 signature of every POST. */
    secret: Type.String({ minLength: 16 }),
    /** Header carrying `sha256=<hex of HMAC(secret, "<X-Hedgerow-Timestamp>.<body>")>`. */
    signatureHeader: Type.String({ pattern: '^[A-Za-z0-9-]+$', default: 'X-Hedgerow-Signature' }),
    /**
     * Extra headers sent with every POST (an Authorization header, for instance). Never, not
     * `false`, for other keys: TypeBox's Value.Default throws on a Record with `false` there.
     */
    headers: Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]+$' }), Type.String(), {
      default: {},
      additionalProperties: Type.Never(),
    }),
    /** One attempt: connecting, sending, the receiver's status and the read of its response body. */
    timeoutMs: Type.Integer({ minimum: 1, default: 5000 }),
    /**
     * Bytes of the receiver's response body read (then dropped) before the rest is cancelled. Only
     * the status counts; reading a short body lets the connection be reused. At most 1 MiB.
     */
    maxResponseBytes: Type.Integer({ minimum: 0, maximum: 1_048_576, default: 65_536 }),
    /** Required sink: attempts after the first before the request fails (503). Optional sink: retried until delivered. */
    maxRetries: Type.Integer({ minimum: 0, maximum: 100, default: 3 }),
    initialBackoffMs: Type.Integer({ minimum: 1, default: 200 }),
    maxBackoffMs: Type.Integer({ minimum: 1, default: 10_000 }),
    /** Events per POST; a larger request is split. */
    maxBatchEvents: Type.Integer({ minimum: 1, default: 500 }),
    /** Events queued or in flight at most; beyond it the sink fails instead of losing events. */
    maxQueueEvents: Type.Integer({ minimum: 1, default: 10_000 }),
    /** At shutdown, how long to keep delivering what is queued; what is left after it is logged as lost. */
    drainTimeoutMs: Type.Integer({ minimum: 0, default: 5000 }),
  },
  { additionalProperties: false },
)

export default definePlugin({
  name: 'sink-webhook',
  apiVersion: API_VERSION,
  optionsSchema,
  setup(api, options) {
    const { url, secret, signatureHeader, headers, timeoutMs, maxResponseBytes } = options
    const target = { url, secret, signatureHeader, headers, timeoutMs, maxResponseBytes }
    // Unknown (an older core) counts as required: acknowledging only delivered events is always safe.
    const durable = api.required !== false
    const queue = new DeliveryQueue(
      (id, body, signal) => postOnce(target, id, body, signal),
      options,
      durable,
      api.logger,
    )
    api.hooks.sink.tapPromise({ name: api.id }, function queueEvents(batch) {
      return queue.enqueue(batch.events.map((event) => JSON.stringify(toDocument(event, batch))))
    })
    api.logger.info({ url: new URL(options.url).origin, durable }, 'sink-webhook posting')
    return () => queue.close(options.drainTimeoutMs)
  },
})
