/**
 * Reading stored events back, newest first, with a cursor for the next page. The cursor carries
 * (timestamp, uuid) of the last row so that pages neither skip nor repeat events sharing a timestamp.
 * Events are read through the `events` service of the sink that stores them (sink-mongo, over its
 * configured collection); ingestion warnings are the core's own collection.
 */
import type { Db } from 'mongodb'
import type { Static } from 'typebox'
import type { EventDocument, EventsPageQuery, EventsReader, Project } from '../plugin-api.ts'
import type { EventsQuery } from './schemas.ts'
import { httpError } from '../errors.ts'
import { COLLECTIONS } from '../model/collections.ts'

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000

function dateParam(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) throw httpError('invalid_input', `${name} must be an ISO 8601 date`, name)
  return date
}

function limitParam(value: string | undefined): number {
  const limit = value === undefined ? DEFAULT_LIMIT : Number(value)
  if (limit < 1 || limit > MAX_LIMIT)
    throw httpError('invalid_input', `limit must be between 1 and ${MAX_LIMIT}`, 'limit')
  return limit
}

function decodeCursor(cursor: string): { t: Date; u: string } {
  try {
    const { t, u } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t: string; u: string }
    const date = new Date(t)
    if (typeof u !== 'string' || Number.isNaN(date.getTime())) throw new Error('bad cursor')
    return { t: date, u }
  } catch {
    throw httpError('invalid_input', 'cursor is not a cursor this API returned', 'cursor')
  }
}

/** The stored document as the API shows it: PostHog's event JSON. */
export function eventJson(doc: EventDocument) {
  return {
    id: doc.uuid,
    uuid: doc.uuid,
    event: doc.event,
    distinct_id: doc.distinct_id,
    properties: doc.properties,
    timestamp: doc.timestamp.toISOString(),
    created_at: doc.created_at instanceof Date ? doc.created_at.toISOString() : null,
    person_id: doc.person_id ?? null,
    person_properties: doc.person_properties ?? null,
    person_mode: doc.person_mode ?? null,
    ...(doc.historical_migration ? { historical_migration: true } : {}),
  }
}

export async function listEvents(
  events: EventsReader | undefined,
  project: Project,
  query: Static<typeof EventsQuery>,
  url: URL,
) {
  const limit = limitParam(query.limit)
  const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  const pageQuery: EventsPageQuery = {
    limit: limit + 1,
    after: dateParam(query.after, 'after'),
    before: dateParam(query.before, 'before'),
    event: query.event,
    distinctId: query.distinct_id,
    below: cursor && { timestamp: cursor.t, uuid: cursor.u },
  }
  if (!events)
    throw httpError(
      'not_found',
      'no configured plugin provides the events service (sink-mongo does), so stored events cannot be read back',
    )
  const docs = await events.page(project.id, pageQuery)
  const page = docs.slice(0, limit)
  let next: string | null = null
  if (docs.length > limit) {
    const last = page[page.length - 1]
    const nextUrl = new URL(url)
    nextUrl.searchParams.set(
      'cursor',
      Buffer.from(JSON.stringify({ t: last.timestamp, u: last.uuid })).toString('base64url'),
    )
    next = nextUrl.toString()
  }
  return { results: page.map(eventJson), next }
}

export async function listWarnings(db: Db, project: Project, query: Static<typeof EventsQuery>) {
  const limit = limitParam(query.limit)
  const docs = await db
    .collection(COLLECTIONS.ingestionWarnings)
    .find({ project_id: project.id })
    .sort({ created_at: -1 })
    .limit(limit)
    .toArray()
  return {
    results: docs.map((d) => ({
      type: d.type,
      created_at: (d.created_at as Date).toISOString(),
      details: d.details,
      event: d.event ?? null,
    })),
  }
}
