/**
 * The open loop's sender (open-loop.ts), run in a thread of its own (load-thread.ts): requests go
 * out at evenly spaced times whether or not earlier answers came back, over a keep-alive pool of node:http
 * connections, and each latency counts from the request's scheduled send time, not from when it
 * went out, so that a service (or a pool) that falls behind shows its backlog in the percentiles
 * instead of delaying the requests that would have measured it (no coordinated omission).
 */
import http from 'node:http'
import { workerData } from 'node:worker_threads'
import { answerRuns, type RunRequest, type RunResult } from './load-thread.ts'

export interface SenderSetup {
  url: string
  bodies: readonly string[]
  rate: number
}

/**
 * Connections in the pool at most: the requests beyond it wait in the agent's queue, and that wait
 * counts in their latency. 64 is twice what a backlog-free 2,000 req/s needs at 16 ms per answer.
 */
const POOL_SIZE = 64
/** Idle pooled connections are closed after this long (the bench's servers keep them 5 s). */
const IDLE_CLOSE_MS = 4000
/** The scheduler's tick: requests due within one are sent together (timers have 1 ms resolution). */
const TICK_MS = 1

const { url: target, bodies, rate } = workerData as SenderSetup
const url = new URL(target)
// idle connections are closed here before node:http's 5 s keep-alive timeout closes them on the
// server's side: a request sent on a connection the server is closing fails with ECONNRESET
const agent = new http.Agent({ keepAlive: true, maxSockets: POOL_SIZE, timeout: IDLE_CLOSE_MS })
let next = 0

/** Sends for `seconds`, then waits for every answer. */
function run({ seconds, record }: RunRequest): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const total = Math.floor(seconds * rate)
    const intervalMs = 1000 / rate
    const latencies = new Float64Array(record ? total : 0)
    const lags = new Float64Array(record ? total : 0)
    let sent = 0
    let answered = 0
    let failed: Error | undefined
    const finish = () => {
      if (sent < total || answered < sent) return
      if (failed) reject(failed)
      else resolve({ answered, latencies, lags })
    }
    const send = (index: number, scheduledAt: number) => {
      if (record) lags[index] = (performance.now() - scheduledAt) * 1000
      const body = bodies[next++ % bodies.length]!
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
            if (record) latencies[index] = (performance.now() - scheduledAt) * 1000
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
      while (sent < total && start + sent * intervalMs <= now) {
        const index = sent++
        send(index, start + index * intervalMs)
      }
      if (sent < total) setTimeout(tick, TICK_MS)
      else finish()
    }
    tick()
  })
}

answerRuns(run)
