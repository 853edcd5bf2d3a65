/**
 * An open-loop load: POST requests sent at evenly spaced times (`rate` per second) whether or not
 * earlier answers came back, as page loads arrive, over a keep-alive pool of node:http
 * connections. Each latency counts from the request's scheduled send time, not from when it went
 * out, so that a service (or a pool) that falls behind shows its backlog in the percentiles
 * instead of delaying the requests that would have measured it (no coordinated omission).
 *
 * autocannon's `overallRate` is not this: each connection gets rate/connections requests a
 * second, sends them back to back as soon as its one-second counter resets
 * (autocannon/lib/httpClient.js, `rateInterval` and `_doRequest`'s `reqsMadeThisSecond`), so
 * 2,000 "per second" over 32 connections arrive in the first ~100-250 ms of each second: closed-loop
 * bursts with idle gaps between them.
 */
import http from 'node:http'
import { latencyHistogram } from './latency.ts'
import type { HttpLoad, Target } from './load.ts'
import { measureSlice } from './load.ts'

/**
 * Connections in the pool at most: the requests beyond it wait in the agent's queue, and that wait
 * counts in their latency. 64 is twice what a backlog-free 2,000 req/s needs at 16 ms per answer.
 */
const POOL_SIZE = 64
/** Idle pooled connections are closed after this long (the bench's servers keep them 5 s). */
const IDLE_CLOSE_MS = 4000
/** The scheduler's tick: requests due within one are sent together (timers have 1 ms resolution). */
const TICK_MS = 1

export function openLoopTarget(spec: Omit<HttpLoad, 'connections'> & { rate: number }): Target {
  const url = new URL(spec.path, spec.url)
  // idle connections are closed here before node:http's 5 s keep-alive timeout closes them on the
  // server's side: a request sent on a connection the server is closing fails with ECONNRESET
  const agent = new http.Agent({ keepAlive: true, maxSockets: POOL_SIZE, timeout: IDLE_CLOSE_MS })
  let next = 0

  /**
   * Sends for `seconds`, then waits for every answer; `onLatency` gets each one's µs from its
   * schedule, `onLag` how many µs after its schedule it went out.
   */
  const run = (seconds: number, onLatency?: (micros: number) => void, onLag?: (micros: number) => void) =>
    new Promise<number>((resolve, reject) => {
      const start = performance.now()
      const total = Math.floor(seconds * spec.rate)
      const intervalMs = 1000 / spec.rate
      let sent = 0
      let answered = 0
      let failed: Error | undefined
      const finish = () => {
        if (sent < total || answered < sent) return
        if (failed) reject(failed)
        else resolve(answered)
      }
      const send = (scheduledAt: number) => {
        onLag?.((performance.now() - scheduledAt) * 1000)
        const body = spec.bodies[next++ % spec.bodies.length]!
        // each request is counted once, whichever of its ends comes first
        let settled = false
        const settle = (error?: Error) => {
          if (settled) return
          settled = true
          if (error) failed ??= error
          answered++
          finish()
        }
        const request = http.request(
          url,
          {
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
            timeout: 30_000,
          },
          (response) => {
            response.resume()
            response.on('end', () => {
              if (response.statusCode! >= 300)
                return settle(new Error(`${url}: answered ${response.statusCode} in an open-loop slice`))
              onLatency?.((performance.now() - scheduledAt) * 1000)
              settle()
            })
            response.on('close', () => settle(new Error(`${url}: the connection closed before the answer ended`)))
          },
        )
        request.on('timeout', () => request.destroy(new Error(`${url}: no answer within 30 s`)))
        request.on('error', settle)
        request.end(body)
      }
      const tick = () => {
        const now = performance.now()
        while (sent < total && start + sent * intervalMs <= now) send(start + sent++ * intervalMs)
        if (sent < total) setTimeout(tick, TICK_MS)
        else finish()
      }
      tick()
    })

  return {
    rssPid: spec.pid,
    warmUp: async (seconds = spec.warmUpSeconds ?? 2) => {
      await run(seconds)
    },
    slice: (seconds) =>
      measureSlice(
        { targetPid: spec.pid, databasePid: spec.databasePid, databaseCommands: spec.databaseCommands },
        async () => {
          const latencies = latencyHistogram()
          const sendLag = latencyHistogram()
          const record = (histogram: typeof latencies) => (micros: number) =>
            histogram.recordValue(Math.max(1, Math.round(micros)))
          const units = await run(seconds, record(latencies), record(sendLag))
          return { units, latencies, sendLag }
        },
      ),
  }
}
