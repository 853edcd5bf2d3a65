// @ts-check
/**
 * hedgerow-plugin-sink-template: a complete sink to copy. It appends each event of a batch to one
 * file as a JSON line and resolves only once the lines are on disk (fsync), so the entry can be
 * `required` without breaking the service's rule that 200 means stored.
 *
 * Types come from `hedgerow/plugin-api` as a type-only import: nothing of the service is loaded
 * at run time, so the plugin works however the service is installed.
 */
import { open } from 'node:fs/promises'
import path from 'node:path'
import { Type } from 'typebox'

/** @import { PluginDefinition, SinkBatch } from 'hedgerow/plugin-api' */

export const optionsSchema = Type.Object(
  {
    /** File the events are appended to; a relative path is resolved from the config file's folder. */
    file: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
)

/**
 * One JSON line per event, in the service's stored-event field names.
 * @param {SinkBatch} batch
 */
export function toLines(batch) {
  let text = ''
  for (const event of batch.events) {
    text += `${JSON.stringify({
      uuid: event.uuid,
      event: event.event,
      distinct_id: event.distinctId,
      project_id: batch.project.id,
      timestamp: event.timestamp,
      properties: event.properties,
    })}\n`
  }
  return text
}

/** @type {PluginDefinition<typeof optionsSchema>} */
const plugin = {
  name: 'hedgerow-plugin-sink-template',
  apiVersion: 1,
  optionsSchema,
  async setup(api, options) {
    const file = path.resolve(api.configDir, options.file)
    // Open once at boot so a wrong path stops the service with this plugin's name, not a request.
    await (await open(file, 'a')).close()

    /** @type {Promise<unknown>} Appends run one at a time, so lines of two batches never interleave. */
    let queue = Promise.resolve()
    async function append(/** @type {string} */ text) {
      const handle = await open(file, 'a')
      try {
        await handle.write(text)
        await handle.datasync()
      } finally {
        await handle.close()
      }
    }

    api.hooks.sink.tapPromise({ name: api.id }, function appendBatch(batch) {
      const text = toLines(batch)
      const done = queue.then(() => append(text))
      queue = done.catch(() => undefined) // one failed append must not fail the next batches
      return done
    })

    // Every acknowledged batch is already on disk; wait for the ones still being written.
    return async function teardown() {
      await queue
    }
  },
}

export default plugin
