/**
 * A load generator in a worker thread of its own. Its timing is the measurement, so it gets a heap
 * of its own: in the bench's main thread it shared one with everything earlier figures left there,
 * and that heap's full collections held answers that had already arrived, a wait that counted as
 * the service's latency (docs/performance.md has the figures).
 */
import { Worker, parentPort } from 'node:worker_threads'

/** A run of `seconds`; `record`: send back each answered request's latency (and the open loop's send lag), µs. */
export interface RunRequest {
  seconds: number
  record: boolean
}

export interface RunResult {
  /** Requests answered 2xx. */
  answered: number
  latencies: Float64Array
  lags?: Float64Array
}

type RunReply = RunResult | { error: string }

/** The sender module `file` (a worker entry that calls `answerRuns`) in its own thread, given `setup` as its workerData. */
export function loadThread(file: URL, setup: unknown): (request: RunRequest) => Promise<RunResult> {
  // through tsx's API (found from the working directory, the project's root): a worker thread does
  // not inherit the `--import tsx` its parent runs with
  const entry = JSON.stringify(file.href)
  const thread = new Worker(`import('tsx/esm/api').then(({ tsImport }) => tsImport(${entry}, ${entry}))`, {
    eval: true,
    workerData: setup,
  })
  // the thread lives as long as its target, and keeps the process alive only while it runs
  thread.unref()
  let waiting: { resolve: (reply: RunReply) => void; reject: (error: Error) => void } | undefined
  // a thread that failed (its module did not load, or it threw) answers no later run: each is refused
  let failure: Error | undefined
  const fail = (error: Error) => {
    failure ??= error
    waiting?.reject(failure)
  }
  thread.on('message', (reply: RunReply) => waiting?.resolve(reply))
  thread.on('error', fail)
  thread.on('exit', (code) => fail(new Error(`the load thread ${file.pathname} exited (code ${code})`)))
  return (request) =>
    new Promise<RunResult>((resolve, reject) => {
      if (failure) return reject(failure)
      thread.ref()
      waiting = { resolve: (reply) => ('error' in reply ? reject(new Error(reply.error)) : resolve(reply)), reject }
      thread.postMessage(request)
    }).finally(() => {
      waiting = undefined
      thread.unref()
    })
}

/** In a sender's thread: answers each run request with `run`'s result, or its error's message. */
export function answerRuns(run: (request: RunRequest) => Promise<RunResult>): void {
  parentPort!.on('message', (request: RunRequest) => {
    run(request).then(
      (result) =>
        parentPort!.postMessage(
          result,
          [result.latencies, result.lags].flatMap((values) => (values ? [values.buffer as ArrayBuffer] : [])),
        ),
      (error: Error) => parentPort!.postMessage({ error: error.message }),
    )
  })
}
