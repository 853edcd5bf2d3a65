/**
 * An open-loop load: POST requests sent at evenly spaced times (`rate` per second) whether or not
 * earlier answers came back, as page loads arrive, each timed from its schedule; the sending runs
 * in a worker thread of its own (open-loop-sender.ts).
 *
 * autocannon's `overallRate` is not this: each connection gets rate/connections requests a
 * second, sends them back to back as soon as its one-second counter resets
 * (autocannon/lib/httpClient.js, `rateInterval` and `_doRequest`'s `reqsMadeThisSecond`), so
 * 2,000 "per second" over 32 connections arrive in the first ~100-250 ms of each second: closed-loop
 * bursts with idle gaps between them.
 */
import { latencyHistogramOf } from './latency.ts'
import type { HttpLoad, Target } from './load.ts'
import { measureSlice } from './load.ts'
import { loadThread } from './load-thread.ts'
import type { SenderSetup } from './open-loop-sender.ts'

export function openLoopTarget(spec: Omit<HttpLoad, 'connections'> & { rate: number }): Target {
  const setup: SenderSetup = { url: new URL(spec.path, spec.url).href, bodies: spec.bodies, rate: spec.rate }
  const run = loadThread(new URL('./open-loop-sender.ts', import.meta.url), setup)

  return {
    rssPid: spec.pid,
    warmUp: async (seconds = spec.warmUpSeconds ?? 2) => {
      await run({ seconds, record: false })
    },
    slice: (seconds) =>
      measureSlice(
        { targetPid: spec.pid, databasePid: spec.databasePid, databaseCommands: spec.databaseCommands },
        async () => {
          const reply = await run({ seconds, record: true })
          return {
            units: reply.answered,
            latencies: latencyHistogramOf(reply.latencies),
            sendLag: latencyHistogramOf(reply.lags),
          }
        },
      ),
  }
}
