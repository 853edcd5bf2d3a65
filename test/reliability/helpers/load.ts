/**
 * Steady capture load that remembers what the service acknowledged: single events and batches
 * with client uuids, a tenth of them person updates that each set a property key of their own, so
 * that afterwards every acknowledged event and every acknowledged person key can be looked up.
 * A request that got no 200 is kept, to be sent again like an SDK retry (same body, same uuids).
 */
import { randomUUID } from 'node:crypto'

interface Sent {
  path: string
  body: string
  uuids: string[]
  personKeys: Array<[distinctId: string, key: string]>
}

export interface LoadOptions {
  token: string
  concurrency?: number
  persons?: number
  /** A request slower than this is abandoned (counted as not acknowledged). */
  timeoutMs?: number
  /** Pause of each loop between requests, to hold the rate down. */
  pauseMs?: number
}

export class CaptureLoad {
  readonly acked = new Set<string>()
  readonly ackedPersonKeys = new Map<string, Set<string>>()
  readonly statuses = new Map<number | string, number>()
  pending: Sent[] = []
  requests = 0
  private seq = 0

  constructor(private readonly options: LoadOptions) {}

  private nextRequest(): Sent {
    const persons = this.options.persons ?? 10
    const count = Math.random() < 0.35 ? 1 : 2 + Math.floor(Math.random() * 9)
    const events = []
    const personKeys: Sent['personKeys'] = []
    for (let i = 0; i < count; i++) {
      const seq = ++this.seq
      const distinctId = `person-${seq % persons}`
      const event: Record<string, unknown> = {
        event: 'load',
        distinct_id: distinctId,
        uuid: randomUUID(),
        properties: { seq },
      }
      if (seq % 10 === 0) {
        const key = `k${seq}`
        ;(event.properties as Record<string, unknown>).$set = { [key]: seq }
        personKeys.push([distinctId, key])
      }
      events.push(event)
    }
    const uuids = events.map((e) => e.uuid as string)
    if (count === 1)
      return {
        path: '/i/v0/e/',
        body: JSON.stringify({ api_key: this.options.token, ...events[0] }),
        uuids,
        personKeys,
      }
    return { path: '/batch/', body: JSON.stringify({ api_key: this.options.token, batch: events }), uuids, personKeys }
  }

  /** Sends one request; true when the service answered 200. */
  async send(url: string, sent: Sent): Promise<boolean> {
    this.requests += 1
    let status: number | string
    try {
      const response = await fetch(url + sent.path, {
        method: 'POST',
        body: sent.body,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      })
      await response.arrayBuffer()
      status = response.status
    } catch (error) {
      status = (error as Error).name
    }
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
    if (status !== 200) return false
    for (const uuid of sent.uuids) this.acked.add(uuid)
    for (const [distinctId, key] of sent.personKeys) {
      const keys = this.ackedPersonKeys.get(distinctId) ?? new Set<string>()
      keys.add(key)
      this.ackedPersonKeys.set(distinctId, keys)
    }
    return true
  }

  /** Sends new requests from `concurrency` loops until `stop` resolves; failures go to `pending`. */
  async run(url: string, stop: Promise<unknown>): Promise<void> {
    let stopped = false
    void stop.then(() => (stopped = true))
    const loop = async () => {
      while (!stopped) {
        const sent = this.nextRequest()
        if (!(await this.send(url, sent))) this.pending.push(sent)
        if (this.options.pauseMs) await new Promise((r) => setTimeout(r, this.options.pauseMs))
      }
    }
    await Promise.all(Array.from({ length: this.options.concurrency ?? 4 }, loop))
  }

  /** Sends every unacknowledged request again until each is acknowledged (or the deadline passes). */
  async retryPending(url: string, deadlineMs = 30_000): Promise<void> {
    const deadline = Date.now() + deadlineMs
    while (this.pending.length > 0 && Date.now() < deadline) {
      const still: Sent[] = []
      for (const sent of this.pending) if (!(await this.send(url, sent))) still.push(sent)
      this.pending = still
      if (still.length > 0) await new Promise((r) => setTimeout(r, 200))
    }
    if (this.pending.length > 0) throw new Error(`${this.pending.length} requests still unacknowledged after retries`)
  }
}
