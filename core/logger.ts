/**
 * The root pino logger: JSON lines on stdout, one per request, with child loggers per plugin.
 *
 * Keys never reach the log: every finished line goes through `redactKeys` just before it is
 * written, whatever logged it (access log, error stacks, plugins). Secret project keys (`phs_…`)
 * and admin keys (`hra_…`, and any key registered with `redactInLogs`, such as a configured admin
 * key of another shape) are replaced by `[redacted]`. The one exception is deliberate: the
 * `adminApiKey` field of the line that shows a freshly generated admin key, once, at first start.
 */
import { pino } from 'pino'
import type { DestinationStream, Logger } from 'pino'

/** Shorter registered keys are not redacted: replacing every "abc" would garble the log, and such a key is guessable anyway. */
export const MIN_REDACTED_KEY_LENGTH = 8

/** The value of the field that shows a generated admin key once; nothing else is exempt. */
const SHOWN_ONCE = '(?<!"adminApiKey":")'
/** Not anchored at a word boundary: a key glued to other text (`tokenphs_…`) is still a key. */
const KEY_SHAPED = new RegExp(`${SHOWN_ONCE}(phs|hra)_[A-Za-z0-9_-]{8,}`, 'g')

const registered = new Set<string>()
let registeredPattern: RegExp | undefined

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Redacts this key from every log line written from now on (in this process). */
export function redactInLogs(key: string): void {
  if (key.length < MIN_REDACTED_KEY_LENGTH || registered.has(key)) return
  registered.add(key)
  // The key as logged may be JSON-escaped (in a string field) or URL-encoded (in a path).
  const forms = new Set([...registered].flatMap((k) => [k, JSON.stringify(k).slice(1, -1), encodeURIComponent(k)]))
  const alternatives = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp)
  registeredPattern = new RegExp(`${SHOWN_ONCE}(?:${alternatives.join('|')})`, 'g')
}

export function redactKeys(line: string): string {
  const shaped = line.replace(KEY_SHAPED, '$1_[redacted]')
  return registeredPattern ? shaped.replace(registeredPattern, '[redacted]') : shaped
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'hedgerow' }, timestamp: pino.stdTimeFunctions.isoTime, hooks: { streamWrite: redactKeys } }
  return destination ? pino(options, destination) : pino(options)
}
