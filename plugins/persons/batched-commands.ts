/**
 * The single-document commands PersonStore makes, each coalesced with the same command of other
 * events in flight (the contract's `api.batching`): one `$in` find, one unordered insertMany or
 * one unordered bulkWrite per event-loop turn instead of one round trip per event. Each caller
 * still gets its own answer (found or not, inserted or duplicate, matched or not), so the store's
 * rules stay the single-document rules of the README.
 */
import { MongoBulkWriteError } from 'mongodb'
import type { AnyBulkWriteOperation, Collection } from 'mongodb'
import { isDuplicateKey } from '../../core/plugin-api.ts'
import type { Batching, Coalescer } from '../../core/plugin-api.ts'
import type { DistinctIdDocument, PersonDocument, PersonlessDistinctIdDocument } from './person-store.ts'

/**
 * The indexes of the documents an unordered insertMany did not insert because they already
 * existed; any other failure is thrown to every caller of the batch.
 */
async function insertAll<T extends DistinctIdDocument | PersonDocument>(
  collection: Collection<T>,
  docs: T[],
): Promise<Set<number>> {
  try {
    // insertMany adds an _id to each document it is given: hand it copies, callers keep theirs clean
    await collection.insertMany(
      docs.map((doc) => ({ ...doc })) as unknown as Parameters<Collection<T>['insertMany']>[0],
      { ordered: false },
    )
    return new Set()
  } catch (error) {
    const writeErrors = error instanceof MongoBulkWriteError ? [error.writeErrors].flat() : []
    if (!writeErrors.length || !writeErrors.every(isDuplicateKey)) throw error
    return new Set(writeErrors.map((e) => e.index))
  }
}

type MappingKey = { projectId: number; distinctId: string }
type PersonKey = { projectId: number; id: string }

export class PersonCommands {
  private readonly mappingReads: Coalescer<MappingKey, DistinctIdDocument>
  private readonly personReads: Coalescer<PersonKey, PersonDocument>
  private readonly personlessReads: Coalescer<MappingKey, true>
  private readonly personlessWrites: Coalescer<MappingKey & { at: Date }, true>
  private readonly mappingInserts: Coalescer<DistinctIdDocument, boolean>
  private readonly personInserts: Coalescer<PersonDocument, PersonDocument>
  private readonly personReplacements: Coalescer<{ serial: number; readVersion: number; next: PersonDocument }, boolean>
  private readonly identifications: Coalescer<PersonKey, true>
  private serial = 0

  constructor(
    { coalescer, byProject, findAll }: Batching,
    distinctIds: Collection<DistinctIdDocument>,
    persons: Collection<PersonDocument>,
    personless: Collection<PersonlessDistinctIdDocument>,
  ) {
    const mappingId = (key: MappingKey) => `${key.projectId}:${key.distinctId}`
    this.mappingReads = coalescer(mappingId, async (keys) => {
      const found = new Map<string, DistinctIdDocument>()
      for (const [projectId, group] of byProject(keys)) {
        const rows = await findAll(
          distinctIds,
          { project_id: projectId, distinct_id: { $in: group.map((key) => key.distinctId) } },
          { _id: 0 },
        )
        for (const row of rows) found.set(`${projectId}:${row.distinct_id}`, row)
      }
      return found
    })
    this.personReads = coalescer(
      (key) => `${key.projectId}:${key.id}`,
      async (keys) => {
        const found = new Map<string, PersonDocument>()
        for (const [projectId, group] of byProject(keys)) {
          const rows = await findAll(
            persons,
            { project_id: projectId, id: { $in: group.map((key) => key.id) } },
            { _id: 0 },
          )
          for (const row of rows) found.set(`${projectId}:${row.id}`, row)
        }
        return found
      },
    )
    this.personlessReads = coalescer(mappingId, async (keys) => {
      const found = new Map<string, true>()
      for (const [projectId, group] of byProject(keys)) {
        const rows = await findAll(
          personless,
          { project_id: projectId, distinct_id: { $in: group.map((key) => key.distinctId) } },
          { _id: 0, distinct_id: 1 },
        )
        for (const row of rows) found.set(`${projectId}:${row.distinct_id}`, true)
      }
      return found
    })
    this.personlessWrites = coalescer<MappingKey & { at: Date }, true>(mappingId, async (keys) => {
      const upserts: AnyBulkWriteOperation<PersonlessDistinctIdDocument>[] = keys.map(
        ({ projectId, distinctId, at }) => ({
          updateOne: {
            filter: { project_id: projectId, distinct_id: distinctId },
            update: { $setOnInsert: { created_at: at } },
            upsert: true,
          },
        }),
      )
      try {
        await personless.bulkWrite(upserts, { ordered: false })
      } catch (error) {
        // two upserts of one new id raced; the row exists either way
        if (!(error instanceof MongoBulkWriteError && [error.writeErrors].flat().every(isDuplicateKey))) throw error
      }
      return new Map<string, true>()
    })
    // Two creators may map one id to different persons in the same turn: both documents are sent
    // and the unique index picks one, exactly as with two insertOne calls.
    this.mappingInserts = coalescer(
      (doc) => `${doc.project_id}:${doc.distinct_id}:${doc.person_id}:${doc.version}`,
      async (docs) => {
        const duplicates = await insertAll(distinctIds, docs)
        return new Map(
          docs.map((doc, index) => [
            `${doc.project_id}:${doc.distinct_id}:${doc.person_id}:${doc.version}`,
            !duplicates.has(index),
          ]),
        )
      },
    )
    // Answers the document that was stored, so its creator need not read it back; nothing when the
    // person already existed (made by a concurrent creator or reader).
    this.personInserts = coalescer(
      (doc) => `${doc.project_id}:${doc.id}`,
      async (docs) => {
        const duplicates = await insertAll(persons, docs)
        const stored = new Map<string, PersonDocument>()
        docs.forEach((doc, index) => duplicates.has(index) || stored.set(`${doc.project_id}:${doc.id}`, doc))
        return stored
      },
    )
    // Idempotent (false only ever becomes true), so callers need no per-update result: they re-read.
    // A person being merged away is left alone: its mark's version must hold until it is committed.
    this.identifications = coalescer(
      (key) => `${key.projectId}:${key.id}`,
      async (keys) => {
        const ops: AnyBulkWriteOperation<PersonDocument>[] = keys.map(({ projectId, id }) => ({
          updateOne: {
            filter: { project_id: projectId, id, is_identified: false, merging: { $exists: false } },
            update: { $set: { is_identified: true }, $inc: { version: 1 } },
          },
        }))
        await persons.bulkWrite(ops, { ordered: false })
        return new Map<string, true>()
      },
    )
    // Each caller needs to know whether its own versioned replace matched, and an unordered
    // bulkWrite reports only the total. When some did not match, every replace of the batch is
    // reported as a conflict: the callers re-read, and one whose write did land finds nothing left
    // to write (recomputing from the stored person is idempotent). Conflicts stay rare and cheap.
    this.personReplacements = coalescer(
      (key) => String(key.serial),
      async (keys) => {
        const ops: AnyBulkWriteOperation<PersonDocument>[] = keys.map(({ readVersion, next }) => ({
          replaceOne: {
            filter: { project_id: next.project_id, id: next.id, version: readVersion },
            replacement: { ...next },
          },
        }))
        const { matchedCount } = await persons.bulkWrite(ops, { ordered: false })
        return new Map(keys.map((key) => [String(key.serial), matchedCount === keys.length]))
      },
    )
  }

  findMapping(projectId: number, distinctId: string): Promise<DistinctIdDocument | undefined> {
    return this.mappingReads.get({ projectId, distinctId })
  }

  findPerson(projectId: number, id: string): Promise<PersonDocument | undefined> {
    return this.personReads.get({ projectId, id })
  }

  async usedPersonless(projectId: number, distinctId: string): Promise<boolean> {
    return (await this.personlessReads.get({ projectId, distinctId })) === true
  }

  async recordPersonless(projectId: number, distinctId: string, at: Date): Promise<void> {
    await this.personlessWrites.get({ projectId, distinctId, at })
  }

  /** False when the (project_id, distinct_id) row already exists. */
  async insertMapping(doc: DistinctIdDocument): Promise<boolean> {
    return (await this.mappingInserts.get(doc)) === true
  }

  /** Replaces the person if it is still at `readVersion`; false when it was not (or may not have been) written. */
  async replacePerson(readVersion: number, next: PersonDocument): Promise<boolean> {
    this.serial = (this.serial + 1) % Number.MAX_SAFE_INTEGER
    return (await this.personReplacements.get({ serial: this.serial, readVersion, next })) === true
  }

  /** Sets `is_identified` if it is still false (bumping the version). */
  async markIdentified(projectId: number, id: string): Promise<void> {
    await this.identifications.get({ projectId, id })
  }

  /**
   * Inserts the person unless one with its id exists: the stored document (this one, or that of a
   * caller of the same turn who asked first), or undefined when it existed already.
   */
  insertPerson(doc: PersonDocument): Promise<PersonDocument | undefined> {
    return this.personInserts.get(doc)
  }
}
