/**
 * Reads one project's live definitions: flags and cohorts of the live generation, and the group
 * type mapping (written by group-update, or by a definitions replacement; read through the core's
 * `groups` service).
 */
import type { Db } from 'mongodb'
import type { GroupsReader } from '../../../core/plugin-api.ts'
import type { CohortDefinition, FlagDefinition } from '../evaluator/index.ts'
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

  constructor(
    private readonly db: Db,
    private readonly groups: GroupsReader,
  ) {
    this.generations = new Generations(db)
  }

  /** Group type mappings of several projects at once (for the cache's poll). */
  groupTypeMappings(projectIds: number[]): Promise<Map<number, Record<string, string>>> {
    return this.groups.typeMappings(projectIds)
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
        this.groups.typeMapping(projectId),
      ])
      const after = await this.generations.live(projectId)
      // the version read first: an edit landing during the read makes the next poll reload
      if (after.generation === live.generation)
        return { ...live, flags: flags as FlagDocument[], cohorts: cohorts as CohortDocument[], groupTypeMapping }
    }
    throw retryableError('flag definitions kept changing while they were read')
  }
}
