/**
 * Static cohort membership by distinct id. A request matches when any distinct id of its person is
 * a member (request-data.ts), so membership follows a person through identify and alias merges.
 */
import { MongoBulkWriteError } from 'mongodb'
import type { Db } from 'mongodb'
import { isDuplicateKey } from '../../../core/plugin-api.ts'
import { DECIDE_COLLECTIONS } from './documents.ts'
import type { CohortMemberDocument } from './documents.ts'

export class CohortMembers {
  constructor(private readonly db: Db) {}

  private get collection() {
    return this.db.collection<CohortMemberDocument>(DECIDE_COLLECTIONS.cohortMembers)
  }

  /** Adds the ids not yet members; answers how many were added. */
  async add(projectId: number, cohortId: number, distinctIds: string[]): Promise<number> {
    const unique = [...new Set(distinctIds)]
    if (unique.length === 0) return 0
    const now = new Date()
    try {
      const result = await this.collection.insertMany(
        unique.map((distinct_id) => ({ project_id: projectId, cohort_id: cohortId, distinct_id, added_at: now })),
        { ordered: false },
      )
      return result.insertedCount
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError) || ![error.writeErrors].flat().every((e) => isDuplicateKey(e)))
        throw error
      return error.insertedCount
    }
  }

  async remove(projectId: number, cohortId: number, distinctIds: string[]): Promise<number> {
    const result = await this.collection.deleteMany({
      project_id: projectId,
      cohort_id: cohortId,
      distinct_id: { $in: distinctIds },
    })
    return result.deletedCount
  }

  /** One page of members in distinct id order, after `after` when given. */
  async list(projectId: number, cohortId: number, limit: number, after?: string): Promise<string[]> {
    const filter = {
      project_id: projectId,
      cohort_id: cohortId,
      ...(after !== undefined && { distinct_id: { $gt: after } }),
    }
    const rows = await this.collection
      .find(filter, { projection: { _id: 0, distinct_id: 1 } })
      .sort({ distinct_id: 1 })
      .limit(limit)
      .toArray()
    return rows.map((row) => row.distinct_id)
  }

  async count(projectId: number, cohortId: number): Promise<number> {
    return this.collection.countDocuments({ project_id: projectId, cohort_id: cohortId })
  }

  async removeCohort(projectId: number, cohortId: number): Promise<void> {
    await this.collection.deleteMany({ project_id: projectId, cohort_id: cohortId })
  }
}
