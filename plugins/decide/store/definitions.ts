/**
 * Reads one project's live definitions: flags and cohorts of the live generation, and the group
 * type mapping (written by group-update, or by a definitions replacement, in the same collection).
 */
import type { Db } from 'mongodb'
import type { CohortDefinition, FlagDefinition } from '../evaluator/index.ts'
import { GROUP_COLLECTIONS } from '../../group-update/documents.ts'
import type { GroupTypeMappingDocument } from '../../group-update/documents.ts'
import { DECIDE_COLLECTIONS } from './documents.ts'
import type { CohortDocument, FlagDocument } from './documents.ts'
import { Generations } from './generations.ts'
import { retryableError } from '../../../core/plugin-api.ts'

export interface StoredDefinitions {
  generation: number
  version: number
  /** Every flag of the live generation, deleted ones included (they count as false for dependencies). */
  flags: FlagDocument[]
  cohorts: CohortDocument[]
  /** Group type index (as a string) → name. */
  groupTypeMapping: Record<string, string>
}

const INTERNAL = { _id: 0, project_id: 0, generation: 0 } as const

/** The evaluator's view of a stored flag: PostHog's flag JSON with the project as team. */
export function toFlagDefinition(doc: FlagDocument, projectId: number): FlagDefinition {
  return {
    id: doc.id,
    team_id: projectId,
    key: doc.key,
    name: doc.name,
    active: doc.active,
    deleted: doc.deleted,
    ensure_experience_continuity: doc.ensure_experience_continuity,
    version: doc.version,
    filters: doc.filters,
    ...(doc.evaluation_runtime !== undefined && { evaluation_runtime: doc.evaluation_runtime }),
    ...(doc.evaluation_tags !== undefined && { evaluation_tags: doc.evaluation_tags }),
    ...(doc.evaluation_contexts !== undefined && { evaluation_contexts: doc.evaluation_contexts }),
    ...(doc.bucketing_identifier !== undefined && { bucketing_identifier: doc.bucketing_identifier }),
  }
}

export function toCohortDefinition(doc: CohortDocument): CohortDefinition {
  return {
    id: doc.id,
    is_static: doc.is_static,
    deleted: doc.deleted,
    cohort_type: doc.cohort_type ?? null,
    filters: doc.filters,
  }
}

export class DefinitionsReader {
  private readonly generations: Generations

  constructor(private readonly db: Db) {
    this.generations = new Generations(db)
  }

  async groupTypeMapping(projectId: number): Promise<Record<string, string>> {
    const docs = await this.db
      .collection<GroupTypeMappingDocument>(GROUP_COLLECTIONS.groupTypeMappings)
      .find({ project_id: projectId }, { projection: { _id: 0, group_type: 1, group_type_index: 1 } })
      .toArray()
    return Object.fromEntries(
      docs
        .sort((a, b) => a.group_type_index - b.group_type_index)
        .map((doc) => [String(doc.group_type_index), doc.group_type]),
    )
  }

  /** Group type mappings of several projects at once (for the cache's poll). */
  async groupTypeMappings(projectIds: number[]): Promise<Map<number, Record<string, string>>> {
    const docs = await this.db
      .collection<GroupTypeMappingDocument>(GROUP_COLLECTIONS.groupTypeMappings)
      .find(
        { project_id: { $in: projectIds } },
        { projection: { _id: 0, project_id: 1, group_type: 1, group_type_index: 1 } },
      )
      .toArray()
    const byProject = new Map<number, Record<string, string>>(projectIds.map((id) => [id, {}]))
    for (const doc of docs.sort((a, b) => a.group_type_index - b.group_type_index)) {
      const mapping = byProject.get(doc.project_id)
      if (mapping) mapping[String(doc.group_type_index)] = doc.group_type
    }
    return byProject
  }

  /** A consistent snapshot: read again if a replacement went live while the documents were read. */
  async load(projectId: number): Promise<StoredDefinitions> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const live = await this.generations.live(projectId)
      const query = { project_id: projectId, generation: live.generation }
      const [flags, cohorts, groupTypeMapping] = await Promise.all([
        this.db
          .collection<FlagDocument>(DECIDE_COLLECTIONS.flags)
          .find(query, { projection: INTERNAL })
          .sort({ id: 1 })
          .toArray(),
        this.db
          .collection<CohortDocument>(DECIDE_COLLECTIONS.cohorts)
          .find(query, { projection: INTERNAL })
          .sort({ id: 1 })
          .toArray(),
        this.groupTypeMapping(projectId),
      ])
      const after = await this.generations.live(projectId)
      // the version read first: an edit landing during the read makes the next poll reload
      if (after.generation === live.generation)
        return { ...live, flags: flags as FlagDocument[], cohorts: cohorts as CohortDocument[], groupTypeMapping }
    }
    throw retryableError('flag definitions kept changing while they were read')
  }
}
