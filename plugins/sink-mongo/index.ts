/**
 * sink-mongo: the default, required sink. Inserts the events of the requests in flight in one
 * unordered insertMany (group-insert.ts); the unique (project_id, uuid) index turns an SDK retry
 * of an acknowledged event into a duplicate key error, which is success here: the event is stored
 * once. Provides the `events` service over the same collection, which the admin API reads.
 */
import { Type } from 'typebox'
import type { IndexDescription } from 'mongodb'
import { API_VERSION, definePlugin } from '../../core/plugin-api.ts'
import { toDocument } from '../../core/plugin-api.ts'
import type { EventDocument, PluginApi } from '../../core/plugin-api.ts'
import { GroupInsert } from './group-insert.ts'
import { StoredEvents } from './reader.ts'
import { applyRetention } from './retention.ts'

export const optionsSchema = Type.Object(
  {
    collection: Type.String({ minLength: 1, default: 'events' }),
    /** Delete events this many days after they were received (a TTL index); unset keeps them. */
    retentionDays: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    /** 'majority' waits for a replica-set majority, so an acknowledged event survives a failover. */
    writeConcern: Type.Union([Type.Literal('majority'), Type.Literal(1)], { default: 'majority' }),
  },
  { additionalProperties: false },
)

/** The indexes capture and the admin API need, created (on a new collection: at once) before setup ends. */
const INDEXES: IndexDescription[] = [
  { key: { project_id: 1, uuid: 1 }, name: 'project_uuid_unique', unique: true },
  { key: { project_id: 1, timestamp: -1, uuid: -1 }, name: 'project_timestamp' },
  { key: { project_id: 1, distinct_id: 1, timestamp: -1 }, name: 'project_distinct_id_timestamp' },
]

/** The first sink-mongo listed serves reads; another instance (an archive collection, say) only stores. */
function provideEvents(api: PluginApi, events: StoredEvents): void {
  try {
    api.provide('events', events)
  } catch {
    api.logger.info('another plugin provides the events service: the admin API does not read this collection')
  }
}

export default definePlugin({
  name: 'sink-mongo',
  apiVersion: API_VERSION,
  optionsSchema,
  async setup(api, options) {
    const collection = api.db.collection<EventDocument>(options.collection)
    await collection.createIndexes(INDEXES)
    // the retention index may take minutes to build on a large collection: after setup (retention.ts)
    let closing = false
    if (options.retentionDays !== undefined)
      void applyRetention(collection, options.retentionDays, api.logger, () => closing)
    const inserts = new GroupInsert(collection, { w: options.writeConcern, j: true })
    provideEvents(api, new StoredEvents(collection))
    api.hooks.sink.tapPromise({ name: api.id }, async function storeEvents(batch) {
      await inserts.insert(batch.events.map((event) => toDocument(event, batch)))
    })
    return () => {
      // a build in progress is not waited for: it goes on in MongoDB, and the embedded lmdb engine resumes it at its next start
      closing = true
    }
  },
})
