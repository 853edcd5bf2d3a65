/**
 * `$identify`, `$create_alias` and `$merge_dangerously` (capture.md §2.6–§2.8): link two distinct
 * ids to one person, or merge two persons into the one of the event's distinct_id.
 */
import type { EventContext, IngestEvent } from '../../core/plugin-api.ts'
import type { PersonDocument, PersonStore, ResolvedPerson } from './person-store.ts'
import { MAX_ATTEMPTS, PersonContentionError, backoff } from './contention.ts'
import { isIllegalDistinctId } from './illegal-ids.ts'
import { personUuid } from './person-uuid.ts'
import { hasOwn, ownValue, warnPersonPropertiesSize } from './properties.ts'
import { currentPerson, finishMerge, startMerge } from './merge-steps.ts'

export { MAX_ATTEMPTS } from './contention.ts'

export interface MergeRequest {
  /** The id whose person is merged away (`$anon_distinct_id` or `alias`). */
  readonly other: string
  /** The event's distinct_id; its person survives. */
  readonly into: string
}

/**
 * The merge an event asks for. `$identify` needs the `$anon_distinct_id` key (even null, which
 * becomes the illegal "null"); the alias events need a truthy `alias`.
 */
export function mergeRequestOf(event: IngestEvent): MergeRequest | undefined {
  const { properties } = event
  if (event.event === '$create_alias' || event.event === '$merge_dangerously') {
    const alias = ownValue(properties, 'alias')
    return alias ? { other: String(alias), into: event.distinctId } : undefined
  }
  if (event.event === '$identify' && hasOwn(properties, '$anon_distinct_id'))
    return { other: String(properties.$anon_distinct_id), into: event.distinctId }
  return undefined
}

/**
 * Runs the merge. Returns the person the event belongs to, or undefined when no merge happens
 * (same id, illegal id): the caller then finds or creates the person of the distinct_id as usual.
 */
export async function merge(
  store: PersonStore,
  event: IngestEvent,
  ctx: EventContext,
  { other, into }: MergeRequest,
): Promise<ResolvedPerson | undefined> {
  if (other === into) return undefined // posthog-node aliases an id to itself when it only sets properties
  const illegal = [into, other].find(isIllegalDistinctId)
  if (illegal !== undefined) {
    ctx.warn('cannot_merge_with_illegal_distinct_id', {
      illegalDistinctId: illegal,
      otherDistinctId: illegal === into ? other : into,
      distinctId: into,
      eventUuid: event.uuid,
    })
    return undefined
  }
  const projectId = ctx.project.id
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const [otherPerson, intoPerson] = await Promise.all([
      store.findByDistinctId(projectId, other, event.timestamp),
      store.findByDistinctId(projectId, into, event.timestamp),
    ])
    let result: ResolvedPerson | null = null
    if (otherPerson?.merging || intoPerson?.merging) {
      // another merge of one of them is not committed yet: decide once it is, or once it is taken back
    } else if (!otherPerson && !intoPerson) result = await createForBoth(store, event, projectId, other, into)
    else if (!otherPerson || !intoPerson)
      result = await addMissingId(store, projectId, (otherPerson ?? intoPerson)!, otherPerson ? into : other)
    else if (otherPerson.id === intoPerson.id) result = await identified(store, intoPerson)
    else if (otherPerson.is_identified && event.event !== '$merge_dangerously') {
      ctx.warn('cannot_merge_already_identified', {
        sourcePersonDistinctId: other,
        targetPersonDistinctId: into,
        distinctId: into,
        eventUuid: event.uuid,
        personId: intoPerson.id,
        otherPersonId: otherPerson.id,
      })
      result = await identified(store, intoPerson)
    } else {
      const survivor = await mergePersons(store, intoPerson, otherPerson, () =>
        warnPersonPropertiesSize(ctx, intoPerson.id, into, event.uuid),
      )
      result = survivor && { person: survivor, created: false }
    }
    if (result && !result.person.merging) return result
    await backoff(attempt)
  }
  throw new PersonContentionError(`merging ${other} into ${into}`)
}

/**
 * Neither id has a person: one person gets both, identified. Its uuid comes from `into`, unless
 * only `other` had personless events, so those events already carry the new person's uuid.
 */
async function createForBoth(
  store: PersonStore,
  event: IngestEvent,
  projectId: number,
  other: string,
  into: string,
): Promise<ResolvedPerson | null> {
  const used = await store.usedPersonless(projectId, [into, other])
  const [primary, secondary] = used.has(other) && !used.has(into) ? [other, into] : [into, other]
  const secondaryVersion = used.has(primary) && used.has(secondary) ? 1 : 0
  const { person, taken } = await store.createPerson(
    projectId,
    personUuid(projectId, primary),
    [
      { distinctId: primary, version: 0 },
      { distinctId: secondary, version: secondaryVersion },
    ],
    { properties: store.initialProperties(event), createdAt: event.timestamp, isIdentified: true },
  )
  return person && !taken.length ? { person, created: true } : null
}

/**
 * Exactly one id has a person: the other id joins it. If that person was merged away while the
 * id was added, the merge may have moved its ids already: reading it again moves this one on.
 */
async function addMissingId(
  store: PersonStore,
  projectId: number,
  person: PersonDocument,
  missing: string,
): Promise<ResolvedPerson | null> {
  const version = (await store.usedPersonless(projectId, [missing])).has(missing) ? 1 : 0
  if (!(await store.addDistinctId(projectId, person.id, missing, version))) return null
  const current = await currentPerson(store, projectId, person.id)
  return current && identified(store, current)
}

async function identified(store: PersonStore, person: PersonDocument): Promise<ResolvedPerson | null> {
  const current = await store.markIdentified(person)
  return current && !current.merging ? { person: current, created: false } : null
}

/**
 * Merges `other` into `into` (merge-steps.ts): properties with the survivor winning, the earlier
 * created_at, identified, version max + 1; every distinct id moves and `other` is deleted.
 * Returns the survivor, or null when either person changed or is being merged since it was read,
 * so the caller starts over from fresh reads. Properties that would together pass the size limit
 * are not merged: the survivor keeps its own (as PostHog's database refuses the merged row), and
 * `oversize` is told.
 */
export async function mergePersons(
  store: PersonStore,
  into: PersonDocument,
  other: PersonDocument,
  oversize: () => void = () => undefined,
): Promise<PersonDocument | null> {
  const committed = await startMerge(store, into, other)
  return committed && finishMerge(store, committed, oversize)
}
