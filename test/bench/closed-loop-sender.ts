/**
 * The closed loop's sender (load.ts's httpTarget), run in a thread of its own (load-thread.ts):
 * autocannon's connections each send their next request when the previous one is answered, the
 * bodies taken in turn from a list. Any non-2xx answer or connection error fails the run.
 */
import autocannon from 'autocannon'
import { workerData } from 'node:worker_threads'
import { answerRuns, type RunRequest, type RunResult } from './load-thread.ts'

export interface ClosedLoopSetup {
  url: string
  path: string
  connections: number
  bodies: readonly string[]
}

const { url, path, connections, bodies } = workerData as ClosedLoopSetup
let next = 0

function run({ seconds, record }: RunRequest): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = []
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        timeout: 30,
        requests: [
          {
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json' },
            setupRequest(request) {
              request.body = bodies[next++ % bodies.length]
              return request
            },
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error)
        if (result.non2xx || result.errors)
          return reject(
            new Error(
              `${url}${path}: ${result.non2xx} non-2xx answers, ${result.errors} errors (${result.timeouts} timeouts)`,
            ),
          )
        if (record && !result['2xx'])
          return reject(
            new Error(
              `${url}${path}: no request completed within ${seconds} s (the machine may be overloaded; raise BENCH_SECONDS)`,
            ),
          )
        resolve({ answered: result['2xx'], latencies: Float64Array.from(latencies) })
      },
    )
    if (record)
      instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        if (statusCode < 300) latencies.push(responseTime * 1000)
      })
  })
}

answerRuns(run)
