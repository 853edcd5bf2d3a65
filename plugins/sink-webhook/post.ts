/**
 * One delivery attempt: a signed JSON POST under a timeout. The signature is HMAC-SHA256 over
 * `<timestamp>.<body>` with the configured secret, so a receiver can refuse both forged bodies
 * and old ones replayed later (it checks the timestamp is recent).
 */
import { createHmac } from 'node:crypto'

export interface PostTarget {
  readonly url: string
  readonly secret: string
  readonly signatureHeader: string
  readonly headers: Readonly<Record<string, string>>
  readonly timeoutMs: number
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
  return 'sha256=' + createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')
}

/** 408 and 429 ask to come back later; any other 4xx refuses the content and retrying cannot help. */
function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

export async function postOnce(target: PostTarget, deliveryId: string, body: string, signal: AbortSignal): Promise<void> {
  const timestamp = String(Math.floor(Date.now() / 1000))
  let response: Response
  try {
    response = await fetch(target.url, {
      method: 'POST',
      body,
      headers: {
        ...target.headers,
        'Content-Type': 'application/json',
        'User-Agent': 'hedgerow-sink-webhook',
        'X-Hedgerow-Delivery': deliveryId,
        'X-Hedgerow-Timestamp': timestamp,
        [target.signatureHeader]: signature(target.secret, timestamp, body),
      },
      signal: AbortSignal.any([signal, AbortSignal.timeout(target.timeoutMs)]),
    })
    await response.arrayBuffer()
  } catch (cause) {
    const timedOut = (cause as Error).name === 'TimeoutError'
    throw new DeliveryError(timedOut ? `no answer within ${target.timeoutMs} ms` : `request failed: ${(cause as Error).message}`, true, undefined, { cause })
  }
  if (response.ok) return
  throw new DeliveryError(`answered ${response.status}`, retryableStatus(response.status), retryAfterMs(response.headers.get('retry-after')))
}
