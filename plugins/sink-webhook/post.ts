/**
 * One delivery attempt: a signed JSON POST under a timeout. The signature is HMAC-SHA256 over
 * `<timestamp>.<body>` with the configured secret, so a receiver can refuse both forged bodies
 * and old ones replayed later (it checks the timestamp is recent).
 *
 * The receiver's answer is its status alone. Redirects are not followed: following a 307 would
 * re-post the signed body and the custom headers (an Authorization, say) to wherever the receiver
 * points, and following a 303 would turn the POST into a GET whose 200 says nothing was delivered.
 * The response body is read only so the connection can be reused, at most `maxResponseBytes` of it
 * and within the attempt's `timeoutMs`; then it is cancelled, so a receiver that streams without
 * end costs one network chunk of memory, not the whole stream.
 */
import { createHmac } from 'node:crypto'

export interface PostTarget {
  readonly url: string
  readonly secret: string
  readonly signatureHeader: string
  readonly headers: Readonly<Record<string, string>>
  /** The whole attempt: connecting, sending, the status line and the read of the response body. */
  readonly timeoutMs: number
  readonly maxResponseBytes: number
}

/** A delivered attempt: the receiver's status and how many bytes of its response were read. */
export interface Answer {
  readonly status: number
  readonly responseBytes: number
}

/** A failed attempt; `retryable` is false when the receiver refused the content itself. */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'DeliveryError'
  }
}

export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`
}

/**
 * 408 and 429 ask to come back later. A 3xx is retried too: it says "not here", not "not this", and
 * refusing it would drop events an optional sink has acknowledged; retried, a moved receiver fails
 * the sink visibly (503s or a full queue) until `url` is corrected. Any other 4xx refuses the
 * content and retrying cannot help.
 */
function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429 || (status >= 300 && status < 400)
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/**
 * Settles like `work`, or rejects with the deadline's reason once it aborts, whichever comes first.
 * An abort signal alone does not bound a fetch: undici follows the signal it is given through a weak
 * reference that a garbage collection can cut (nodejs/node#55428, nodejs/undici#4068), after which
 * neither the wait for headers nor the read of the body ever ends.
 */
function untilAborted<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  if (deadline.aborted) return Promise.reject(deadline.reason)
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(deadline.reason)
    deadline.addEventListener('abort', stop, { once: true })
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', stop))
  })
}

/**
 * Reads and drops the response body until it ends, `maxBytes` have arrived (the last chunk may go
 * past it by its own size, one network read) or the deadline aborts; then cancels the rest. Returns
 * the bytes read. A body cut short changes nothing: the status already answered.
 */
async function discardBody(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  deadline: AbortSignal,
): Promise<number> {
  if (!body) return 0
  const reader = body.getReader()
  let read = 0
  try {
    while (read < maxBytes) {
      const chunk = await untilAborted(reader.read(), deadline)
      if (chunk.done) break
      read += chunk.value.byteLength
    }
  } catch {
    // The deadline passed or the connection dropped mid-body: the status is the answer.
  } finally {
    reader.cancel().catch(() => undefined)
  }
  return read
}

function describeStatus(response: Response): string {
  const location = response.headers.get('location')
  if (response.status < 300 || response.status >= 400) return `answered ${response.status}`
  const where = location ? ` to ${JSON.stringify(location.slice(0, 200))}` : ''
  return `answered ${response.status}, a redirect${where}; redirects are not followed (set url to the receiver's final address)`
}

export async function postOnce(
  target: PostTarget,
  deliveryId: string,
  body: string,
  signal: AbortSignal,
): Promise<Answer> {
  const timestamp = String(Math.floor(Date.now() / 1000))
  // The attempt's deadline, held here (by the timer and the listener) rather than by fetch alone.
  const deadline = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    deadline.abort(new Error(`no answer within ${target.timeoutMs} ms`))
  }, target.timeoutMs)
  const stop = () => deadline.abort(signal.reason)
  signal.addEventListener('abort', stop, { once: true })
  if (signal.aborted) stop()
  try {
    const pending = fetch(target.url, {
      method: 'POST',
      body,
      redirect: 'manual',
      headers: {
        ...target.headers,
        'Content-Type': 'application/json',
        'User-Agent': 'hedgerow-sink-webhook',
        'X-Hedgerow-Delivery': deliveryId,
        'X-Hedgerow-Timestamp': timestamp,
        [target.signatureHeader]: signature(target.secret, timestamp, body),
      },
      signal: deadline.signal,
    })
    let response: Response
    try {
      response = await untilAborted(pending, deadline.signal)
    } catch (cause) {
      // A fetch whose signal a collection cut can outlive its deadline (undici's own 300 s headers
      // timeout ends it at the latest); if it answers after all, its body is not wanted.
      pending
        .then(
          (late) => late.body?.cancel(),
          () => undefined,
        )
        .catch(() => undefined)
      throw new DeliveryError(
        timedOut ? `no answer within ${target.timeoutMs} ms` : `request failed: ${(cause as Error).message}`,
        true,
        undefined,
        { cause },
      )
    }
    const responseBytes = await discardBody(response.body, target.maxResponseBytes, deadline.signal)
    if (response.ok) return { status: response.status, responseBytes }
    throw new DeliveryError(
      describeStatus(response),
      retryableStatus(response.status),
      retryAfterMs(response.headers.get('retry-after')),
    )
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', stop)
  }
}
