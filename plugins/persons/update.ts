/**
 * The personUpdate step: normalises the event's person properties, applies `$set` /
 * `$set_once` / `$unset` to the person the aliasResolve step found, and sets the person properties the
 * stored event carries (capture.md §2.12).
 */
import type { EventContext, IngestEvent } from '../../core/plugin-api.ts'
import type { PersonDocument, PersonStore } from './person-store.ts'
import { PersonContentionError, backoff } from './person-store.ts'
import { MAX_ATTEMPTS } from './merge.ts'
import { SequencePersons } from './sequence-persons.ts'
import { layered, warnPersonPropertiesSize, withinPersonPropertiesLimit } from './properties.ts'
import { NOT_NORMALISED_EVENTS, normaliseForPerson, operationsOf } from './normalise.ts'
import type { PersonOperations } from './normalise.ts'
import { applyOperations } from './property-ops.ts'
import type { OperationOptions } from './property-ops.ts'
import { copyRecord } from '../../core/plugin-api.ts'

export interface UpdateOptions {
  readonly skipFilteredWrites: boolean
  readonly setOnceFillsNull: boolean
  /** Each of `$set`, `$set_once` and `$unset` is applied with its first this-many keys. */
  readonly maxKeysPerOperation: number
}

/** Processed in their own pipeline at PostHog, unordered with other person updates. */
const NO_PERSON_UPDATE_EVENTS = new Set(['$exception', '$$heatmap'])
const PERSON_OPERATIONS = ['$set', '$set_once', '$unset']

/** The event properties the personUpdate step stores: with `$set` / `$set_once` filled in (normalise.ts). */
function normalisedProperties(event: IngestEvent): Record<string, unknown> {
  return NOT_NORMALISED_EVENTS.has(event.event) ? event.properties : normaliseForPerson(event.properties)
}

/**
 * The properties `updateEvent` writes on a person that `event` has just created with `created`
 * (the aliasResolve step inserts the person with them, so the step then finds nothing to write).
 */
export function creationProperties(
  event: IngestEvent,
  created: Record<string, unknown>,
  options: UpdateOptions,
): Record<string, unknown> {
  if (event.event === '$groupidentify' || NO_PERSON_UPDATE_EVENTS.has(event.event)) return created
  const ops = operationsOf(normalisedProperties(event), options.maxKeysPerOperation)
  const change = applyOperations(created, ops, { event: event.event, ...options, ignoreUnset: true })
  // too large: the person is created without them, and the update step records the violation
  return change.write && withinPersonPropertiesLimit(change.properties) ? change.properties : created
}

export async function updateEvent(
  store: PersonStore,
  event: IngestEvent,
  ctx: EventContext,
  options: UpdateOptions,
): Promise<IngestEvent | undefined> {
  if (event.personless || !event.person) return undefined
  let properties = event.properties
  if (event.event === '$groupidentify') {
    // Group properties travel in $group_set; person operations on $groupidentify are ignored and stripped.
    return { ...event, properties: copyRecord(properties, PERSON_OPERATIONS) }
  }
  properties = normalisedProperties(event)
  const ops = operationsOf(properties, options.maxKeysPerOperation)
  if (ops.exceeded)
    ctx.warn('person_update_keys_limit_reached', { ...ops.exceeded, max_keys: options.maxKeysPerOperation })
  const handed = store.resolved.get(event)
  let person = handed?.person ?? (await store.findById(ctx.project.id, event.person.id))
  let personProperties = person?.properties ?? event.person.properties
  if (!NO_PERSON_UPDATE_EVENTS.has(event.event)) {
    const opOptions: OperationOptions = { event: event.event, ...options, ignoreUnset: handed?.created === true }
    ;({ person, properties: personProperties } = await writeOperations(store, ctx, event, person, ops, opOptions))
    SequencePersons.of(ctx).remember(event.distinctId, person)
  }
  const id = person?.id ?? event.person.id
  const createdAt = person?.created_at ?? event.person.createdAt
  // The stored event always shows what it set, even when the write was skipped or lost to a newer one.
  return {
    ...event,
    properties,
    person: { id, properties: layered(personProperties, ops.set), createdAt, mode: 'full' },
  }
}

/**
 * Optimistic loop: compute from the person as read, write if it is still at that version, else
 * re-read and compute again. A person merged away in between is found again by distinct_id. A
 * change that would take the person past the size limit is not written (PostHog's database
 * refuses it): the person stays as it was and the violation is recorded.
 */
async function writeOperations(
  store: PersonStore,
  ctx: EventContext,
  event: IngestEvent,
  start: PersonDocument | null,
  ops: PersonOperations,
  options: OperationOptions,
): Promise<{ person: PersonDocument; properties: Record<string, unknown> }> {
  const projectId = ctx.project.id
  let person = start
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    person ??= await store.findByDistinctId(projectId, event.distinctId, event.timestamp)
    if (!person) break
    const change = applyOperations(person.properties, ops, options)
    if (!change.write) return { person, properties: change.properties }
    if (!withinPersonPropertiesLimit(change.properties)) {
      warnPersonPropertiesSize(ctx, person.id, event.distinctId, event.uuid)
      return { person, properties: person.properties }
    }
    const written = await store.writePerson(person, { properties: change.properties })
    if (written) return { person: written, properties: written.properties }
    await backoff(attempt)
    person = await store.findById(projectId, person.id)
  }
  throw new PersonContentionError(`updating the person of ${event.distinctId}`)
}
