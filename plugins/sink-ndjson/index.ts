/**
 * sink-ndjson: appends every kept event to newline-delimited JSON files (one stored-event
 * document per line, as sink-mongo stores it), rotated by size and by time. As a required sink a
 * request is acknowledged only after its lines are fsynced; as an optional sink lines are buffered
 * and flushed every `flushIntervalMs` and at shutdown.
 */
import path from 'node:path'
import { mkdir } from 'node:fs/promises'
import { Type } from 'typebox'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import type { SinkBatch } from '../../core/plugin-api.ts'
import { toDocument } from '../../core/plugin-api.ts'
import { RotatingFiles } from './files.ts'
import { NdjsonWriter } from './writer.ts'

const MiB = 1024 * 1024

export const optionsSchema = Type.Object(
  {
    /** Folder of the files; relative to the config file's folder. Default: `ndjson` in the data folder. */
    dir: Type.Optional(Type.String({ minLength: 1 })),
    /** Files are named `<prefix>-<opened, UTC>-<n>.ndjson`. */
    prefix: Type.String({ pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$', default: 'events' }),
    /** A file is closed before a write would make it larger (a single larger batch gets a file of its own). */
    maxFileBytes: Type.Integer({ minimum: 1024, default: 64 * MiB }),
    /** Files cover whole periods of this length since the epoch (default: one per hour, even when idle). */
    rotateEveryMs: Type.Integer({ minimum: 1000, default: 3_600_000 }),
    /** Optional sink: how often buffered lines are written and fsynced. */
    flushIntervalMs: Type.Integer({ minimum: 1, maximum: 600_000, default: 1000 }),
    /** Optional sink: unwritten bytes held at most; beyond it the sink fails rather than dropping events. */
    maxBufferBytes: Type.Integer({ minimum: 1024, default: 16 * MiB }),
  },
  { additionalProperties: false },
)

export function toLines(batch: SinkBatch): string {
  let text = ''
  for (const event of batch.events) text += `${JSON.stringify(toDocument(event, batch))}\n`
  return text
}

export default definePlugin({
  name: 'sink-ndjson',
  apiVersion: API_VERSION,
  optionsSchema,
  async setup(api, options) {
    const dir = options.dir ? path.resolve(api.configDir, options.dir) : path.join(api.dataDir, 'ndjson')
    await mkdir(dir, { recursive: true })
    const files = new RotatingFiles({
      dir,
      prefix: options.prefix,
      maxFileBytes: options.maxFileBytes,
      rotateEveryMs: options.rotateEveryMs,
    })
    const writer = new NdjsonWriter(files, options, api.logger)
    // Unknown (an older core) counts as required: acknowledging only fsynced lines is always safe.
    const durable = api.required !== false
    api.hooks.sink.tapPromise({ name: api.id }, function appendEvents(batch) {
      return writer.write(toLines(batch), durable)
    })
    api.logger.info({ dir, durable }, 'sink-ndjson writing')
    return () => writer.close()
  },
})
