/**
 * Atomic replacement without transactions (they need a replica set and the embedded server has
 * none). Every flag and cohort document carries a `generation`; the project's version document
 * names the live one. A replacement writes a whole new generation, then moves the pointer with a
 * single-document update, then deletes older generations. A crash before the move leaves unused
 * documents of a higher generation (deleted by the next replacement); a crash after it leaves
 * only stale documents of a lower one. Readers never see a mix.
 *
 * Single-flag and single-cohort edits write into the live generation and then bump the version
 * only if that generation is still live; if a replacement moved the pointer in between, the edit
 * is retried against the new generation.
 */
import type { Db } from 'mongodb'
import { isDuplicateKey } from '../../../core/plugin-api.ts'
import { DECIDE_COLLECTIONS } from './documents.ts'
import type { VersionDocument } from './documents.ts'

export interface LiveVersion {
  generation: number
  version: number
}

const NONE: LiveVersion = { generation: 0, version: 0 }

export class Generations {
  constructor(private readonly db: Db) {}

  private get versions() {
    return this.db.collection<VersionDocument>(DECIDE_COLLECTIONS.versions)
  }

  async live(projectId: number): Promise<LiveVersion> {
    const doc = await this.versions.findOne(
      { project_id: projectId },
      { projection: { _id: 0, generation: 1, version: 1 } },
    )
    return doc ? { generation: doc.generation, version: doc.version } : NONE
  }

  /** The live version of each listed project that has one. */
  async liveMany(projectIds: number[]): Promise<Map<number, LiveVersion>> {
    const docs = await this.versions
      .find({ project_id: { $in: projectIds } }, { projection: { _id: 0, project_id: 1, generation: 1, version: 1 } })
      .toArray()
    return new Map(docs.map((doc) => [doc.project_id, { generation: doc.generation, version: doc.version }]))
  }

  /** A generation number no other replacement of this project gets. */
  async reserve(projectId: number): Promise<number> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const doc = await this.versions.findOneAndUpdate(
          { project_id: projectId },
          { $inc: { reserved: 1 }, $setOnInsert: { generation: 0, version: 0, updated_at: new Date() } },
          { upsert: true, returnDocument: 'after' },
        )
        if (doc) return doc.reserved
      } catch (error) {
        // two first-ever upserts raced; the loser finds the winner's document next time
        if (!isDuplicateKey(error)) throw error
      }
    }
    throw new Error('could not reserve a flag definitions generation')
  }

  /** Makes `generation` live unless a later one already is; false when it was superseded. */
  async activate(projectId: number, generation: number): Promise<boolean> {
    const result = await this.versions.updateOne(
      { project_id: projectId, generation: { $lt: generation } },
      { $set: { generation, updated_at: new Date() }, $inc: { version: 1 } },
    )
    return result.matchedCount === 1
  }

  /** Records an edit made in `generation`; false when that generation is no longer live. */
  async bump(projectId: number, generation: number): Promise<boolean> {
    try {
      const result = await this.versions.updateOne(
        { project_id: projectId, generation },
        { $inc: { version: 1 }, $set: { updated_at: new Date() }, $setOnInsert: { reserved: generation } },
        { upsert: generation === 0 },
      )
      return result.matchedCount === 1 || result.upsertedCount === 1
    } catch (error) {
      // the upsert of generation 0 met a document whose generation moved on
      if (isDuplicateKey(error)) return false
      throw error
    }
  }

  /** Deletes the documents of generations older than the live one, and of `abandoned` if given. */
  async collect(projectId: number, abandoned?: number): Promise<void> {
    const { generation } = await this.live(projectId)
    const stale = abandoned === undefined ? { $lt: generation } : { $in: [abandoned] }
    for (const name of [DECIDE_COLLECTIONS.flags, DECIDE_COLLECTIONS.cohorts]) {
      await this.db.collection(name).deleteMany({ project_id: projectId, generation: stale })
    }
  }
}
