/**
 * The aliasResolve step: attributes each event to a person (capture.md §2.3, §2.5, §2.6) and
 * hands the person on to the personUpdate step (update.ts) through `store.resolved`.
 */
import type { EventContext, IngestEvent } from '../../core/plugin-api.ts'
import type { PersonStore, ResolvedPerson } from './person-store.ts'
import { PersonContentionError, backoff } from './person-store.ts'
import { MAX_ATTEMPTS, merge, mergeRequestOf } from './merge.ts'
import { FAKE_PERSON_CREATED_AT, personUuid } from './person-uuid.ts'
import { SequencePersons } from './sequence-persons.ts'
import { withMergeIdAsDistinctId } from './merge-id.ts'
import { emptyProperties, hasOwn } from './properties.ts'
import { copyRecord, withFields } from '../../core/plugin-api.ts'

export interface ResolveOptions {
  /** Personless events of a person older than `forceUpgradeAfterMs` carry its properties (mode force_upgrade). */
  readonly forceUpgrade: boolean
  readonly forceUpgradeAfterMs: number
}

/** Person property operations that a personless event must not carry (capture.md §2.3). */
const PERSON_OPERATIONS = ['$set', '$set_once', '$unset']
/** true is the default; PostHog drops the key from person-processed events */
const PROCESS_PERSON_PROFILE = ['$process_person_profile']

export async function resolveEvent(
  store: PersonStore,
  sent: IngestEvent,
  ctx: EventContext,
  options: ResolveOptions,
): Promise<IngestEvent> {
  if (sent.personless) return resolvePersonless(store, sent, ctx, options)
  const event = withMergeIdAsDistinctId(sent)
  const request = mergeRequestOf(event)
  const sequence = SequencePersons.of(ctx)
  let resolved: ResolvedPerson
  if (request) {
    sequence.forget() // the merge may move ids between persons
    resolved = (await merge(store, event, ctx, request)) ?? (await findOrCreate(store, event, ctx.project.id))
  } else {
    const known = sequence.get(event.distinctId)
    resolved = known ? { person: known, created: false } : await findOrCreate(store, event, ctx.project.id)
  }
  const properties = copyRecord(event.properties, PROCESS_PERSON_PROFILE)
  const { person } = resolved
  sequence.remember(event.distinctId, person)
  const result: IngestEvent = withFields(event, {
    properties,
    person: { id: person.id, properties: person.properties, createdAt: person.created_at, mode: 'full' },
  })
  store.resolved.set(result, resolved)
  return result
}

/** The person of the event's distinct_id, created from this event if there is none. */
export async function findOrCreate(store: PersonStore, event: IngestEvent, projectId: number): Promise<ResolvedPerson> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const found = await store.findByDistinctId(projectId, event.distinctId, event.timestamp)
    if (found) return { person: found, created: false }
    const { person, taken } = await store.createPerson(
      projectId,
      personUuid(projectId, event.distinctId),
      [{ distinctId: event.distinctId, version: 0 }],
      {
        properties: store.initialProperties(event),
        createdAt: event.timestamp,
        isIdentified: false,
      },
    )
    if (person && !taken.length) return { person, created: true }
    await backoff(attempt)
  }
  throw new PersonContentionError(`creating the person of ${event.distinctId}`)
}

/**
 * No person is created or changed. The event goes to the existing person with empty properties
 * (or, if that person is older than a minute, with its properties: force_upgrade), or else to the
 * fake person whose uuid a later real person of this distinct_id will share.
 */
async function resolvePersonless(
  store: PersonStore,
  event: IngestEvent,
  ctx: EventContext,
  options: ResolveOptions,
): Promise<IngestEvent> {
  const properties = withoutPersonOperations(event.properties)
  const projectId = ctx.project.id
  const existing =
    SequencePersons.known(ctx, event.distinctId) ??
    (await store.findByDistinctId(projectId, event.distinctId, event.timestamp))
  if (existing) {
    SequencePersons.of(ctx).remember(event.distinctId, existing)
    const upgrade =
      options.forceUpgrade && existing.created_at.getTime() < event.timestamp.getTime() - options.forceUpgradeAfterMs
    return withFields(event, {
      properties,
      person: {
        id: existing.id,
        properties: upgrade ? existing.properties : emptyProperties(),
        createdAt: existing.created_at,
        mode: upgrade ? 'force_upgrade' : 'propertyless',
      },
    })
  }
  if (!store.personlessRecorded(projectId, event.distinctId))
    await store.recordPersonless(projectId, event.distinctId, event.timestamp)
  return withFields(event, {
    properties,
    person: {
      id: personUuid(projectId, event.distinctId),
      properties: emptyProperties(),
      createdAt: FAKE_PERSON_CREATED_AT,
      mode: 'propertyless',
    },
  })
}

/** The properties without person operations; the same object when it has none (the usual case). */
function withoutPersonOperations(properties: Record<string, unknown>): Record<string, unknown> {
  return PERSON_OPERATIONS.some((key) => hasOwn(properties, key))
    ? copyRecord(properties, PERSON_OPERATIONS)
    : properties
}
