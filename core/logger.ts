/**
 * The root pino logger: JSON lines on stdout, one per request, with child loggers per plugin; the
 * lines of a few milliseconds are written together (batchedLines). When stdout is a terminal (and
 * the config does not ask for JSON) the lines are printed human-readable by pino-pretty instead.
 *
 * Keys never reach the log: every finished line goes through `redactKeys` just before it is
 * written, whatever logged it (access log, error stacks, plugins). Secret project keys (`phs_…`)
 * and admin keys (`hra_…`, and any key registered with `redactInLogs`, such as a configured admin
 * key of another shape) are replaced by `[redacted]`. The one exception is deliberate: the
 * `adminApiKey` field of the line that shows a freshly generated admin key, once, at first start.
 */
import { pino } from 'pino'
import type { DestinationStream, Logger } from 'pino'
import { prettyFactory } from 'pino-pretty'

/** Shorter registered keys are not redacted: replacing every "abc" would garble the log, and such a key is guessable anyway. */
export const MIN_REDACTED_KEY_LENGTH = 8

/** The value of the field that shows a generated admin key once; nothing else is exempt. */
const SHOWN_ONCE = '(?<!"adminApiKey":")'
/** Not anchored at a word boundary: a key glued to other text (`tokenphs_…`) is still a key. */
const KEY_SHAPED = new RegExp(`${SHOWN_ONCE}(phs|hra)_[A-Za-z0-9_-]{8,}`, 'g')

const registered = new Set<string>()
let registeredPattern: RegExp | undefined
/** Every text `registeredPattern` can match: a line containing none of them is left as it is without running it. */
let registeredForms: string[] = []

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Redacts this key from every log line written from now on (in this process). */
export function redactInLogs(key: string): void {
  if (key.length < MIN_REDACTED_KEY_LENGTH || registered.has(key)) return
  registered.add(key)
  // The key as logged may be JSON-escaped (in a string field) or URL-encoded (in a path).
  const forms = new Set([...registered].flatMap((k) => [k, JSON.stringify(k).slice(1, -1), encodeURIComponent(k)]))
  registeredForms = [...forms].sort((a, b) => b.length - a.length)
  registeredPattern = new RegExp(`${SHOWN_ONCE}(?:${registeredForms.map(escapeRegExp).join('|')})`, 'g')
}

/**
 * Every line passes here (one access-log line per request), and almost none holds a key: a substring
 * search for what each pattern needs ("phs_", "hra_", a registered key) skips the regular
 * expressions, whose scan with a look-behind at every position cost more than the search.
 */
export function redactKeys(line: string): string {
  const shaped = line.includes('phs_') || line.includes('hra_') ? line.replace(KEY_SHAPED, '$1_[redacted]') : line
  if (!registeredPattern || !registeredForms.some((form) => shaped.includes(form))) return shaped
  return shaped.replace(registeredPattern, '[redacted]')
}

let isoTimeMs = Number.NaN
let isoTimeField = ''

/**
 * pino's `isoTime` (`,"time":"2026-01-01T00:00:00.000Z"`), formatted once per millisecond: under
 * load several lines share a millisecond, and formatting a Date is a visible part of a log line.
 */
export function isoTime(): string {
  const now = Date.now()
  if (now !== isoTimeMs) {
    isoTimeMs = now
    isoTimeField = `,"time":"${new Date(now).toISOString()}"`
  }
  return isoTimeField
}

/** More than this many characters waiting are written at once, without waiting for the next flush. */
const MAX_PENDING_CHARS = 64 * 1024
/** How long a logged line may wait to be written with the lines after it. */
const LOG_FLUSH_MS = 10

/**
 * A destination that writes the lines logged within `flushMs` together (and synchronously at exit):
 * pino's default writes each line with its own system call, and one access-log line per request made
 * that a visible share of a flags request's CPU under load. Flushing at the end of each event-loop
 * turn still cost a system call and an immediate per turn, and a loaded service turns its loop for
 * every request or two; a short timer writes tens of lines at once. Lines keep their order; what a
 * process killed with SIGKILL loses is at most the last `flushMs` of lines.
 */
export function batchedLines(
  sink: { write(text: string): unknown },
  flushMs = LOG_FLUSH_MS,
): DestinationStream & { flush(): void } {
  let pending = ''
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    clearTimeout(timer)
    timer = undefined
    if (pending === '') return
    const text = pending
    pending = ''
    sink.write(text)
  }
  return {
    write(line: string) {
      pending += line
      if (pending.length > MAX_PENDING_CHARS) flush()
      else timer ??= setTimeout(flush, flushMs).unref()
    },
    flush,
  }
}

let stdout: (DestinationStream & { flush(): void }) | undefined

/** stdout (synchronous writes, as pino's default), batched (batchedLines); one per process. */
function batchedStdout(): DestinationStream {
  if (!stdout) {
    stdout = batchedLines(pino.destination({ dest: 1, sync: true }))
    process.on('exit', stdout.flush)
  }
  return stdout
}

/** `auto`: pretty for a person at a terminal, JSON for whatever else reads stdout (a pipe, a file, a log collector). */
export type LogFormat = 'auto' | 'json' | 'pretty'

export function chooseLogFormat(format: LogFormat, isTTY: boolean | undefined): 'json' | 'pretty' {
  return format === 'auto' ? (isTTY ? 'pretty' : 'json') : format
}

/**
 * Each finished (already redacted) JSON line, made human-readable by pino-pretty's formatter and
 * written synchronously. In-process on purpose: pino's `transport` option would run pino-pretty in
 * a worker thread, whose buffered lines are lost when the process exits abruptly.
 */
export function prettyLines(sink: { write(text: string): unknown }, colorize?: boolean): DestinationStream {
  const prettify = prettyFactory({
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
  })
  return { write: (line: string) => void sink.write(prettify(line)) }
}

/** Where the service logs: stdout, as JSON lines or pretty ones (see chooseLogFormat). */
export function stdoutDestination(format: LogFormat, isTTY = process.stdout.isTTY): DestinationStream {
  return chooseLogFormat(format, isTTY) === 'pretty'
    ? prettyLines(pino.destination({ dest: 1, sync: true }))
    : batchedStdout()
}

export function createLogger(level: string, destination: DestinationStream = stdoutDestination('auto')): Logger {
  const options = {
    level,
    base: { service: 'hedgerow' },
    timestamp: isoTime,
    hooks: { streamWrite: redactKeys },
  }
  return pino(options, destination)
}
