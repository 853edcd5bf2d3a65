// The live event stream as the console reads it: Server-Sent Events over fetch (EventSource cannot
// send the admin key), reconnecting by itself with `Last-Event-ID` when the stream ends (a service
// restart), so the events stored meanwhile arrive first. Events are handed over in batches, at most
// one per BATCH_MS (on an animation frame), so 100 events a second cost a few renders, not 100.
// A batch holds at most `keep` events (the newest; older ones are only counted): a tab in the
// background runs no animation frame, and its batch must not grow with every event of the hour.
import { ApiError, liveEventsPath, openStream } from './api.js'

const MAX_RETRY_MS = 10_000
const BATCH_MS = 100

/** Blocks of one SSE frame: `{id, event, data}` of each complete frame in `text`, and the rest. */
function parseFrames(text) {
  const frames = []
  let end = text.indexOf('\n\n')
  while (end >= 0) {
    const frame = {}
    for (const line of text.slice(0, end).split('\n')) {
      const colon = line.indexOf(':')
      if (colon <= 0) continue
      const field = line.slice(0, colon)
      const value = line.slice(colon + 1).replace(/^ /, '')
      frame[field] = field === 'data' && frame.data !== undefined ? `${frame.data}\n${value}` : value
    }
    frames.push(frame)
    text = text.slice(end + 2)
    end = text.indexOf('\n\n')
  }
  return { frames, rest: text }
}

/**
 * Follows a project's stored events: `onEvents(batch, older)` with new events (oldest first, at
 * most `keep` of them) and how many arrived before them in the same batch and were left out,
 * `onDropped(count)` when the service skipped some, `onStatus('connecting' | 'live' |
 * 'reconnecting' | 'failed', message?)`. Returns a function that stops it.
 */
export function followEvents(projectId, filters, { onEvents, onDropped, onStatus, keep = 500 }) {
  const controller = new AbortController()
  let lastEventId = null
  let retryMs = 1000
  let batch = []
  let older = 0
  let scheduled = false

  const flush = () => {
    scheduled = false
    const events = batch.length > keep ? batch.slice(-keep) : batch
    const left = older + batch.length - events.length
    batch = []
    older = 0
    if (events.length && !controller.signal.aborted) onEvents(events, left)
  }
  const queue = (event) => {
    batch.push(event)
    // cut to `keep` once twice as long: the cost per event stays constant
    if (batch.length >= 2 * keep) {
      older += batch.length - keep
      batch = batch.slice(-keep)
    }
    if (!scheduled) {
      scheduled = true
      setTimeout(() => requestAnimationFrame(flush), BATCH_MS)
    }
  }

  async function readOnce() {
    const headers = lastEventId ? { 'Last-Event-ID': lastEventId } : {}
    const response = await openStream(liveEventsPath(projectId, filters), headers, controller.signal)
    onStatus('live')
    retryMs = 1000
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      const parsed = parseFrames(text + value)
      text = parsed.rest
      for (const frame of parsed.frames) {
        if (frame.retry) retryMs = Number(frame.retry) || retryMs
        if (frame.event === 'event') {
          lastEventId = frame.id ?? lastEventId
          queue({ ...JSON.parse(frame.data), streamId: frame.id })
        } else if (frame.event === 'dropped') onDropped(JSON.parse(frame.data).count)
      }
    }
  }

  async function run() {
    onStatus('connecting')
    while (!controller.signal.aborted) {
      try {
        await readOnce()
      } catch (error) {
        if (controller.signal.aborted) return
        // a refused request (a bad filter, a missing key) will not get better by retrying
        if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
          onStatus('failed', error.message)
          return
        }
      }
      if (controller.signal.aborted) return
      onStatus('reconnecting')
      await new Promise((resolve) => setTimeout(resolve, retryMs))
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS)
    }
  }
  void run()
  return () => controller.abort()
}
