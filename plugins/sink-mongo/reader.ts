/**
 * The `events` service over the collection this sink stores in: a page of one project's events,
 * newest first and then by uuid, on the `project_timestamp` index. The admin API reads events
 * through it, so it reads whichever collection the operator configured.
 */
import type { Collection, Filter } from 'mongodb'
import type {
  EventDocument,
  EventsFollowQuery,
  EventsFollower,
  EventsListener,
  EventsPageQuery,
  EventsReader,
} from '../../core/plugin-api.ts'
import { followEvents } from './follow.ts'

export class StoredEvents implements EventsReader {
  constructor(private readonly collection: Collection<EventDocument>) {}

  page(projectId: number, query: EventsPageQuery): Promise<EventDocument[]> {
    const filter: Filter<EventDocument> = { project_id: projectId }
    const timestamp: { $gt?: Date; $lt?: Date } = {}
    if (query.after) timestamp.$gt = query.after
    if (query.before) timestamp.$lt = query.before
    if (timestamp.$gt || timestamp.$lt) filter.timestamp = timestamp
    if (query.event !== undefined) filter.event = query.event
    if (query.distinctId !== undefined) filter.distinct_id = query.distinctId
    if (query.below) {
      const { timestamp: t, uuid } = query.below
      filter.$or = [{ timestamp: { $lt: t } }, { timestamp: t, uuid: { $lt: uuid } }]
    }
    return this.collection
      .find(filter, { projection: { _id: 0 } })
      .sort({ timestamp: -1, uuid: -1 })
      .limit(query.limit)
      .toArray() as Promise<EventDocument[]>
  }

  follow(projectId: number, query: EventsFollowQuery, listener: EventsListener): Promise<EventsFollower> {
    return followEvents(this.collection, projectId, query, listener)
  }
}
