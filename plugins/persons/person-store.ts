/**
 * The person collections and every read and write made to them. Writes are single-document and
 * safe across processes without transactions: the unique (project_id, distinct_id) index decides
 * who maps an id first, and property writes replace the whole `properties` object under an
 * optimistic `version` check (design.md §3: a property name never becomes an update path).
 */
import type { Collection, Db, Filter, IndexDescription, UpdateFilter } from 'mongodb'
import type { Properties } from './properties.ts'
import { layered } from './properties.ts'
import type { Batching, IngestEvent } from '../../core/plugin-api.ts'
import { isDuplicateKey } from '../../core/plugin-api.ts'
import { PersonCommands } from './batched-commands.ts'
import { ProjectKeyed } from './project-keyed.ts'
import { RememberedPersonIds } from './remembered-person-ids.ts'
import { PersonContentionError } from './contention.ts'
import { STALE_MARK_MS, currentPerson } from './merge-steps.ts'
import type { MergedSource, MergingMark } from './merge-steps.ts'

export const PERSON_COLLECTIONS = {
  persons: 'persons',
  distinctIds: 'person_distinct_ids',
  personlessDistinctIds: 'personless_distinct_ids',
  merges: 'person_merges',
} as const

/** How long the record of a finished merge is kept: a distinct id left pointing at the deleted person finds the survivor through it. */
const MERGE_RECORD_TTL_SECONDS = 30 * 24 * 3600

/** One person (PostHog's `posthog_person`). */
export interface PersonDocument {
  project_id: number
  /** The person uuid: the UUIDv5 of "<project_id>:<first distinct_id>" (person-uuid.ts). */
  id: string
  properties: Properties
  is_identified: boolean
  created_at: Date
  /** 0 at creation, +1 per write, max of both + 1 after a merge. */
  version: number
  /** Present while the person is being merged away (merge-steps.ts): it takes no more writes. */
  merging?: MergingMark
  /** Persons recently folded into this one, so that folding one again is seen as done. */
  merged?: MergedSource[]
}

/** Where a person deleted by a merge went; kept for `MERGE_RECORD_TTL_SECONDS`. */
export interface PersonMergeDocument {
  project_id: number
  /** The merged-away person. */
  id: string
  /** The person it was merged into (which may have been merged on since). */
  into: string
  merged_at: Date
}

/** Which person a distinct_id belongs to; one row per (project_id, distinct_id). */
export interface DistinctIdDocument {
  project_id: number
  distinct_id: string
  person_id: string
  /** 1 when the id had personless events before it joined this person (they carry its fake uuid). */
  version: number
}

/** A distinct_id that had personless events while it had no person (capture.md §2.3). */
export interface PersonlessDistinctIdDocument {
  project_id: number
  distinct_id: string
  created_at: Date
}

const INDEXES: Record<string, IndexDescription[]> = {
  [PERSON_COLLECTIONS.persons]: [{ key: { project_id: 1, id: 1 }, name: 'project_id_unique', unique: true }],
  [PERSON_COLLECTIONS.distinctIds]: [
    { key: { project_id: 1, distinct_id: 1 }, name: 'project_distinct_id_unique', unique: true },
    { key: { project_id: 1, person_id: 1 }, name: 'project_person_id' },
  ],
  [PERSON_COLLECTIONS.personlessDistinctIds]: [
    { key: { project_id: 1, distinct_id: 1 }, name: 'project_distinct_id_unique', unique: true },
  ],
  [PERSON_COLLECTIONS.merges]: [
    { key: { project_id: 1, id: 1 }, name: 'project_id_unique', unique: true },
    { key: { merged_at: 1 }, name: 'merged_at_ttl', expireAfterSeconds: MERGE_RECORD_TTL_SECONDS },
  ],
}

export async function ensurePersonIndexes(db: Db): Promise<void> {
  for (const [name, indexes] of Object.entries(INDEXES)) await db.collection(name).createIndexes(indexes)
}

/** Read API for other plugins (flags): the person a distinct_id belongs to, or null. */
export async function getPersonByDistinctId(
  db: Db,
  projectId: number,
  distinctId: string,
): Promise<PersonDocument | null> {
  const mapping = await db
    .collection<DistinctIdDocument>(PERSON_COLLECTIONS.distinctIds)
    .findOne({ project_id: projectId, distinct_id: distinctId })
  if (!mapping) return null
  return db
    .collection<PersonDocument>(PERSON_COLLECTIONS.persons)
    .findOne({ project_id: projectId, id: mapping.person_id }, { projection: { _id: 0 } })
}

/** Every distinct_id of a person, sorted. */
export async function getDistinctIdsOfPerson(db: Db, projectId: number, personId: string): Promise<string[]> {
  const rows = await db
    .collection<DistinctIdDocument>(PERSON_COLLECTIONS.distinctIds)
    .find({ project_id: projectId, person_id: personId }, { projection: { _id: 0, distinct_id: 1 } })
    .toArray()
  return rows.map((row) => row.distinct_id).sort()
}

export { PersonContentionError, backoff } from './contention.ts'

/** How long a reader waits for a mapping's person to appear before it recreates it (a creator that crashed). */
const DANGLING_RETRIES = 3
const DANGLING_WAIT_MS = 15
/** Personless ids remembered per process so a browsing session does not upsert on every event. */
const PERSONLESS_CACHE_SIZE = 10_000

/** What the aliasResolve step hands on to the personUpdate step for one event. */
export interface ResolvedPerson {
  /** The person as last read or written; its `version` is the optimistic starting point. */
  readonly person: PersonDocument
  /** This event created the person: `$unset` is ignored at creation, as PostHog does. */
  readonly created: boolean
}

export interface NewPerson {
  readonly properties: Properties
  readonly createdAt: Date
  readonly isIdentified: boolean
}

/**
 * What the personUpdate step will write on a person this event creates, given the properties it
 * is created with: the person is then inserted with them, in one write, instead of inserted and
 * rewritten (PostHog creates it with its `$set_once` and `$set` too).
 */
export type CreationProperties = (event: IngestEvent, created: Properties) => Properties

export class PersonStore {
  readonly persons: Collection<PersonDocument>
  readonly distinctIds: Collection<DistinctIdDocument>
  readonly personless: Collection<PersonlessDistinctIdDocument>
  readonly merges: Collection<PersonMergeDocument>
  /** Keyed by the event object the aliasResolve step returned; read by the personUpdate step. */
  readonly resolved = new WeakMap<object, ResolvedPerson>()
  /** The ids this process noted as personless. */
  private readonly recordedPersonless = new ProjectKeyed<true>(PERSONLESS_CACHE_SIZE)
  /** The person id each distinct id was last found with: only that person is read next time. */
  private readonly personIds = new RememberedPersonIds()
  /** Concurrent lookups and inserts (the events of a request, of concurrent requests) share one command. */
  private readonly commands: PersonCommands

  /**
   * `batching` is the plugin api's (`api.batching`). `creationProperties` is the personUpdate
   * step's (index.ts); without it (property updates off) a person is created with
   * `$creator_event_uuid` alone.
   */
  constructor(
    readonly db: Db,
    batching: Batching,
    private readonly creationProperties?: CreationProperties,
    /** Told of each person this store writes (or may have written), once the write is over. */
    private readonly onWritten?: (projectId: number, id: string) => void,
  ) {
    this.persons = db.collection<PersonDocument>(PERSON_COLLECTIONS.persons)
    this.distinctIds = db.collection<DistinctIdDocument>(PERSON_COLLECTIONS.distinctIds)
    this.personless = db.collection<PersonlessDistinctIdDocument>(PERSON_COLLECTIONS.personlessDistinctIds)
    this.merges = db.collection<PersonMergeDocument>(PERSON_COLLECTIONS.merges)
    this.commands = new PersonCommands(batching, this.distinctIds, this.persons, this.personless)
  }

  /**
   * Applies `update` to the person if it is still at the version it was read at (and matches
   * `condition`), bumping the version; false when it was not.
   */
  private async updateAtVersion(
    person: Pick<PersonDocument, 'project_id' | 'id' | 'version'>,
    condition: Filter<PersonDocument>,
    update: UpdateFilter<PersonDocument>,
  ): Promise<boolean> {
    const { project_id, id, version } = person
    const { matchedCount } = await this.written(
      project_id,
      id,
      this.persons.updateOne({ project_id, id, version, ...condition }, { ...update, $inc: { version: 1 } }),
    )
    return matchedCount === 1
  }

  /** Waits for a write of the person, then tells `onWritten`, even if it failed (it may have landed). */
  private async written<T>(projectId: number, id: string, write: Promise<T>): Promise<T> {
    try {
      return await write
    } finally {
      this.onWritten?.(projectId, id)
    }
  }

  /** The properties a person created by `event` is inserted with. */
  initialProperties(event: IngestEvent): Properties {
    const created = layered({}, { $creator_event_uuid: event.uuid })
    return this.creationProperties ? this.creationProperties(event, created) : created
  }

  /**
   * The person with this id, or null when there is none or it was merged away (its distinct ids
   * lead to the survivor). A person whose merge is not committed yet is returned, marked: it can
   * be read, and `writePerson` refuses it until the merge is committed or taken back.
   */
  async findById(projectId: number, id: string): Promise<PersonDocument | null> {
    const person = await this.readById(projectId, id)
    if (!person?.merging) return person
    if (person.merging.committed) return null
    if (Date.now() - person.merging.since.getTime() <= STALE_MARK_MS) return person
    return (await this.takeBackMark(person)) ?? this.findById(projectId, id)
  }

  /** The stored document, marked or not. */
  async readById(projectId: number, id: string): Promise<PersonDocument | null> {
    return (await this.commands.findPerson(projectId, id)) ?? null
  }

  /** The person of a distinct_id (remembered-person-ids.ts: often one read of the person alone). */
  findByDistinctId(projectId: number, distinctId: string, now: Date): Promise<PersonDocument | null> {
    return this.personIds.find(this, projectId, distinctId, now)
  }

  /**
   * The person of a distinct_id read through its mapping, following (and finishing) a merge of
   * it. A mapping whose person is missing and was not merged away belongs to a creation in
   * flight (mapping first, person second); if the person never appears the creator died, and the
   * reader makes the empty person itself so the id is usable again.
   */
  async findThroughMapping(projectId: number, distinctId: string, now = new Date()): Promise<PersonDocument | null> {
    let personId: string | undefined
    for (let attempt = 0; attempt <= DANGLING_RETRIES; attempt++) {
      const mapping = await this.commands.findMapping(projectId, distinctId)
      if (!mapping) return null
      const person = await currentPerson(this, projectId, mapping.person_id)
      if (person) return person
      personId = mapping.person_id
      await new Promise((resolve) => setTimeout(resolve, DANGLING_WAIT_MS * (attempt + 1)))
    }
    return this.ensurePerson(projectId, personId!, { properties: {}, createdAt: now, isIdentified: false })
  }

  /**
   * Maps each id (the first is the primary) to `personId`, then creates the person if any id was
   * mapped. Ids that already belonged to another person come back in `taken`: a concurrent
   * creator or merge won them, and the caller re-reads and decides again.
   */
  async createPerson(
    projectId: number,
    personId: string,
    ids: ReadonlyArray<{ distinctId: string; version: number }>,
    init: NewPerson,
  ): Promise<{ person: PersonDocument | null; taken: string[] }> {
    const taken: string[] = []
    for (const { distinctId, version } of ids) {
      if (!(await this.addDistinctId(projectId, personId, distinctId, version))) taken.push(distinctId)
    }
    const person =
      taken.length < ids.length
        ? await this.written(projectId, personId, this.ensurePerson(projectId, personId, init))
        : null
    if (person)
      for (const { distinctId } of ids)
        if (!taken.includes(distinctId)) this.personIds.remember(projectId, distinctId, person.id)
    return { person, taken }
  }

  /** Maps a new id to a person; false when the id already belongs to another person. */
  async addDistinctId(projectId: number, personId: string, distinctId: string, version = 0): Promise<boolean> {
    if (
      await this.commands.insertMapping({
        project_id: projectId,
        distinct_id: distinctId,
        person_id: personId,
        version,
      })
    )
      return true
    const existing = await this.commands.findMapping(projectId, distinctId)
    return existing?.person_id === personId
  }

  /**
   * Inserts the person unless it exists. A reader that found the mapping first may have made it
   * already; `is_identified` is then caught up. If it was merged away meanwhile, the ids just
   * mapped to it are moved on and the survivor is returned.
   */
  private async ensurePerson(projectId: number, personId: string, init: NewPerson): Promise<PersonDocument> {
    // if it exists, a concurrent creator or reader made it: read it back; if it was inserted now, it is as stored
    const inserted = await this.commands.insertPerson({
      project_id: projectId,
      id: personId,
      properties: init.properties,
      is_identified: init.isIdentified,
      created_at: init.createdAt,
      version: 0,
    })
    const person = inserted ? { ...inserted } : await currentPerson(this, projectId, personId)
    const result = person && init.isIdentified ? await this.markIdentified(person) : person
    if (!result) throw new PersonContentionError(`person ${personId} vanished while it was created`)
    return result
  }

  /**
   * Writes the person with new `properties` (and optionally other fields) if it is still at the
   * version it was read at. The whole document is replaced: a replacement stores any nested name
   * (`$browser`, `a.b`, `__proto__`) as data, where an update operator would read it as a path.
   * Returns the written document, or null when someone wrote in between or the person is being
   * merged away (the writer reads again and lands on the survivor).
   */
  async writePerson(
    person: PersonDocument,
    changes: Partial<Pick<PersonDocument, 'properties' | 'created_at' | 'is_identified' | 'version' | 'merged'>>,
  ): Promise<PersonDocument | null> {
    if (person.merging) return null
    const merged = changes.merged ?? person.merged
    const next: PersonDocument = {
      project_id: person.project_id,
      id: person.id,
      properties: changes.properties ?? person.properties,
      is_identified: changes.is_identified ?? person.is_identified,
      created_at: changes.created_at ?? person.created_at,
      version: changes.version ?? person.version + 1,
      ...(merged?.length ? { merged } : {}),
    }
    return (await this.written(person.project_id, person.id, this.commands.replacePerson(person.version, next)))
      ? next
      : null
  }

  /** `is_identified` only ever goes from false to true, so it needs no version check. A person being merged away is left as it is. */
  async markIdentified(person: PersonDocument): Promise<PersonDocument | null> {
    if (person.is_identified || person.merging) return person
    await this.written(person.project_id, person.id, this.commands.markIdentified(person.project_id, person.id))
    return this.findById(person.project_id, person.id)
  }

  async moveDistinctIds(projectId: number, fromPersonId: string, toPersonId: string): Promise<void> {
    await this.distinctIds.updateMany(
      { project_id: projectId, person_id: fromPersonId },
      { $set: { person_id: toPersonId } },
    )
  }

  /** Marks the person as being merged into `into` if it is still at the version it was read at (merge-steps.ts step 1). */
  async markMerging(person: PersonDocument, into: string): Promise<PersonDocument | null> {
    const merging: MergingMark = { into, committed: false, since: new Date(), version: person.version }
    const updated = await this.updateAtVersion(person, { merging: { $exists: false } }, { $set: { merging } })
    return updated ? { ...person, merging, version: person.version + 1 } : null
  }

  /** Commits a mark nobody took back (step 3). */
  async commitMerging(marked: PersonDocument): Promise<PersonDocument | null> {
    const updated = await this.updateAtVersion(
      marked,
      { 'merging.committed': false },
      { $set: { 'merging.committed': true } },
    )
    return updated ? { ...marked, merging: { ...marked.merging!, committed: true }, version: marked.version + 1 } : null
  }

  /** Takes back an uncommitted mark: the person takes writes again. Null if the mark changed meanwhile. */
  async takeBackMark(marked: PersonDocument): Promise<PersonDocument | null> {
    const updated = await this.updateAtVersion(marked, { 'merging.committed': false }, { $unset: { merging: '' } })
    return updated ? withoutMark(marked) : null
  }

  /** Drops a committed mark whose target is gone for good (merge-steps.ts `abandon`). */
  async dropMark(marked: PersonDocument): Promise<PersonDocument | null> {
    return (await this.updateAtVersion(marked, {}, { $unset: { merging: '' } })) ? withoutMark(marked) : null
  }

  /** Records where a merged-away person goes, before it is deleted (step 5). */
  async recordMerged(projectId: number, id: string, into: string): Promise<void> {
    await this.merges
      .updateOne({ project_id: projectId, id }, { $setOnInsert: { into, merged_at: new Date() } }, { upsert: true })
      .catch((error: unknown) => {
        if (!isDuplicateKey(error)) throw error // two processes finishing one merge both upserted
      })
  }

  /** The person a deleted person was merged into, if a merge deleted it. */
  async mergedInto(projectId: number, id: string): Promise<string | undefined> {
    return (await this.merges.findOne({ project_id: projectId, id }, { projection: { _id: 0, into: 1 } }))?.into
  }

  /** Deletes a merged-away person; its mark is committed, so no write has changed it since. */
  async deleteMerged(person: PersonDocument): Promise<void> {
    await this.written(
      person.project_id,
      person.id,
      this.persons.deleteOne({ project_id: person.project_id, id: person.id, 'merging.committed': true }),
    )
  }

  /** Whether this process already noted the id as used personless (then recordPersonless does nothing). */
  personlessRecorded(projectId: number, distinctId: string): boolean {
    return this.recordedPersonless.get(projectId, distinctId) === true
  }

  /** Notes that a distinct_id was used personless, once per process and id (bounded memory). */
  async recordPersonless(projectId: number, distinctId: string, at: Date): Promise<void> {
    if (this.personlessRecorded(projectId, distinctId)) return
    await this.commands.recordPersonless(projectId, distinctId, at)
    this.recordedPersonless.set(projectId, distinctId, true)
  }

  /** Which of these ids have had personless events. */
  async usedPersonless(projectId: number, distinctIds: string[]): Promise<Set<string>> {
    const used = await Promise.all(distinctIds.map((distinctId) => this.commands.usedPersonless(projectId, distinctId)))
    return new Set(distinctIds.filter((_, index) => used[index]))
  }
}

function withoutMark(marked: PersonDocument): PersonDocument {
  const { merging: _, ...rest } = marked
  return { ...rest, version: marked.version + 1 }
}
