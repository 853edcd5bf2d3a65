/**
 * A merge of two persons as steps that each write one document, recorded on the merged-away
 * person first, so that any process can finish a merge another one started (README, "A merge"):
 *
 * 1. **mark** the source `merging: { into, committed: false }` under its version. From then on
 *    no write to it lands: every writer checks the version it read, and one that reads the mark
 *    does not write.
 * 2. **check** the target: it must exist and carry no mark. If it carries one, two merges may be
 *    pointing at each other: the mark is taken back and the merge starts over. Each merge marks
 *    first and checks second, so of two merges that could close a cycle at least one sees the
 *    other's mark; committed marks therefore never form a cycle.
 * 3. **commit** the mark under its version. A committed merge is only ever rolled forward.
 * 4. **fold** the source's properties under the target's (the target wins, PostHog's rule) with a
 *    versioned write that also lists the source in the target's `merged`, so a second process
 *    finishing the same merge sees it done instead of folding twice.
 * 5. **record** where the source went (`person_merges`), **move** its distinct ids, **delete** it.
 *
 * A reader that meets a committed mark, or a distinct id whose person was deleted by a merge,
 * finishes the merge and goes on to the survivor; one that meets an uncommitted mark reads the
 * person as it is and waits to write. A mark nobody commits (its process died) is taken back
 * after `STALE_MARK_MS`.
 */
import type { PersonDocument, PersonStore } from './person-store.ts'
import { MAX_ATTEMPTS, PersonContentionError, backoff } from './contention.ts'
import { layered, withinPersonPropertiesLimit } from './properties.ts'
import type { Properties } from './properties.ts'

/** How long an uncommitted mark may stand before another process takes it back. */
export const STALE_MARK_MS = 5_000
/** How many merged-away persons, and for how long, a survivor lists to keep folds idempotent. */
const MERGED_KEPT = 100
const MERGED_KEPT_MS = 10 * 60_000
/** Merges followed from one person at most; committed merges form no cycle, this bounds a damaged store. */
const MAX_HOPS = 1_000

/** On a person being merged away. */
export interface MergingMark {
  /** The person it is merged into. */
  readonly into: string
  /** Past the check: the merge is finished by whoever meets it, and never taken back. */
  readonly committed: boolean
  /** When it was marked, for taking back the mark of a process that died. */
  readonly since: Date
  /** Its version before the mark: the survivor's version is the greater of both, plus one. */
  readonly version: number
}

/** On a survivor: a person recently folded into it. */
export interface MergedSource {
  readonly id: string
  readonly at: Date
}

/**
 * Steps 1-3 for merging `source` into `target` (both as just read). Returns the source with its
 * committed mark, or null when either changed or is being merged: the caller reads again.
 */
export async function startMerge(
  store: PersonStore,
  target: PersonDocument,
  source: PersonDocument,
): Promise<PersonDocument | null> {
  if (source.merging || target.merging) return null
  const marked = await store.markMerging(source, target.id)
  if (!marked) return null
  const fresh = await store.readById(target.project_id, target.id)
  if (!fresh || fresh.merging) {
    await store.takeBackMark(marked)
    return null
  }
  return store.commitMerging(marked)
}

/**
 * Steps 4-5 for a source with a committed mark; safe to run any number of times, by any process,
 * concurrently. Returns the survivor as last read or written. `oversize` is told when the two
 * persons' properties together pass the size limit (the survivor then keeps its own).
 */
export async function finishMerge(
  store: PersonStore,
  source: PersonDocument,
  oversize: () => void = () => undefined,
  hops = 0,
): Promise<PersonDocument> {
  const mark = source.merging!
  const projectId = source.project_id
  let survivor: PersonDocument | null = null
  for (let attempt = 0; !survivor; attempt++) {
    if (attempt >= MAX_ATTEMPTS) throw new PersonContentionError(`folding ${source.id} into ${mark.into}`)
    const target = await currentPerson(store, projectId, mark.into, hops + 1)
    if (!target) return abandon(store, source)
    if (target.merging) {
      // the target is being merged too, not committed yet: wait for that, or take back a dead process's mark
      if (isStale(target)) await store.takeBackMark(target)
      await backoff(attempt)
      continue
    }
    if (target.merged?.some((merged) => merged.id === source.id)) survivor = target
    else survivor = await store.writePerson(target, foldedInto(target, source, oversize))
    if (!survivor) await backoff(attempt)
  }
  await store.recordMerged(projectId, source.id, mark.into)
  survivor = await moveIds(store, projectId, source.id, survivor, hops)
  await store.deleteMerged(source)
  return survivor
}

/**
 * The person `id` is now: itself, or the survivor it was merged into (finishing an interrupted
 * merge on the way). A person whose mark is not committed is returned as it is, readable, with
 * writes refused until its merge is committed or taken back. Null when no person has the id and
 * none was merged away under it (a creation in flight, whose mapping comes before its person).
 */
export async function currentPerson(
  store: PersonStore,
  projectId: number,
  id: string,
  hops = 0,
): Promise<PersonDocument | null> {
  if (hops > MAX_HOPS) throw new PersonContentionError(`following the merges of person ${id}`)
  const person = await store.readById(projectId, id)
  if (person?.merging?.committed) return finishMerge(store, person, undefined, hops)
  if (person)
    return isStale(person)
      ? ((await store.takeBackMark(person)) ?? currentPerson(store, projectId, id, hops + 1))
      : person
  const into = await store.mergedInto(projectId, id)
  if (into === undefined) return null
  const survivor = await currentPerson(store, projectId, into, hops + 1)
  // an id added to the person after its merge moved the others leads nowhere: move it too
  return survivor && moveIds(store, projectId, id, survivor, hops)
}

/**
 * Moves every distinct id of `fromId` to `survivor`. If the survivor is being merged away
 * itself, its own merge may have moved its ids before these arrived: that merge is finished
 * (again), which moves them on.
 */
async function moveIds(
  store: PersonStore,
  projectId: number,
  fromId: string,
  survivor: PersonDocument,
  hops: number,
): Promise<PersonDocument> {
  await store.moveDistinctIds(projectId, fromId, survivor.id)
  const fresh = await store.readById(projectId, survivor.id)
  if (fresh && !fresh.merging?.committed) return fresh
  const next = await currentPerson(store, projectId, survivor.id, hops + 1)
  if (!next) throw new PersonContentionError(`person ${survivor.id} vanished while ids were moved to it`)
  return next
}

/**
 * The target of a committed merge is gone without a trace (it cannot be while its record is
 * kept): nothing was folded anywhere, so the source stays a person, with its ids and properties.
 */
async function abandon(store: PersonStore, source: PersonDocument): Promise<PersonDocument> {
  const kept = await store.dropMark(source)
  if (!kept) throw new PersonContentionError(`merging ${source.id}, whose target is gone`)
  return kept
}

function isStale(person: PersonDocument): boolean {
  return (
    person.merging !== undefined &&
    !person.merging.committed &&
    Date.now() - person.merging.since.getTime() > STALE_MARK_MS
  )
}

/** The survivor's fields after `source` is folded in: PostHog's merge, as capture.md §2.6 has it. */
function foldedInto(target: PersonDocument, source: PersonDocument, oversize: () => void): Partial<PersonDocument> {
  return {
    properties: mergedProperties(source.properties, target.properties, oversize),
    created_at: target.created_at.getTime() <= source.created_at.getTime() ? target.created_at : source.created_at,
    is_identified: true,
    version: Math.max(target.version, source.merging!.version) + 1,
    merged: mergedList(target, source),
  }
}

/** `under` laid beneath `over`, or `over` alone when the two would pass the size limit. */
function mergedProperties(under: Properties, over: Properties, oversize: () => void): Properties {
  const merged = layered(under, over)
  if (withinPersonPropertiesLimit(merged)) return merged
  oversize()
  return over
}

/** The target's list plus the source and what had been folded into the source, recent ones only. */
function mergedList(target: PersonDocument, source: PersonDocument): MergedSource[] {
  const now = Date.now()
  const byId = new Map<string, MergedSource>()
  for (const entry of [...(target.merged ?? []), ...(source.merged ?? []), { id: source.id, at: new Date(now) }]) {
    if (now - entry.at.getTime() < MERGED_KEPT_MS) byId.set(entry.id, entry)
  }
  return [...byId.values()].slice(-MERGED_KEPT)
}
