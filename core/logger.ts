/** The root pino logger: JSON lines on stdout, one per request, with child loggers per plugin. */
import { pino } from 'pino'
import type { Logger } from 'pino'

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'hedgerow' }, timestamp: pino.stdTimeFunctions.isoTime })
}
