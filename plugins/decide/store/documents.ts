/**
 * The stored shapes of flag definitions (documented in README.md so operators can load them with
 * their own tools). A flag document is PostHog's flag JSON plus `project_id` and `generation`; a
 * cohort document is PostHog's cohort row plus the same two fields. Only the documents of the
 * project's active generation (see generations.ts) are live.
 */
import type { Db, IndexDescription } from 'mongodb'
import type { FlagFilters } from '../evaluator/index.ts'

export const DECIDE_COLLECTIONS = {
  flags: 'feature_flags',
  cohorts: 'cohorts',
  cohortMembers: 'cohort_members',
  hashKeyOverrides: 'hash_key_overrides',
  /** One document per project: the active generation and a version bumped on every change. */
  versions: 'flag_definition_versions',
} as const

export interface FlagDocument {
  project_id: number
  generation: number
  id: number
  key: string
  name: string | null
  active: boolean
  deleted: boolean
  ensure_experience_continuity: boolean
  /** PostHog's flag version: +1 per REST update; reported as `metadata.version`. */
  version: number
  filters: FlagFilters
  evaluation_runtime?: string | null
  evaluation_tags?: string[] | null
  evaluation_contexts?: string[] | null
  bucketing_identifier?: string | null
  has_encrypted_payloads?: boolean | null
  /** PostHog's remote-config flag: it exists to serve its payload (OFREP answers the payload as the value). */
  is_remote_configuration?: boolean | null
  created_at: Date
  updated_at: Date
}

export interface CohortDocument {
  project_id: number
  generation: number
  id: number
  name: string | null
  description: string
  is_static: boolean
  deleted: boolean
  /** `{ properties: { type: 'AND' | 'OR', values: [...] } }` for dynamic cohorts; `{}` for static ones. */
  filters: Record<string, unknown>
  cohort_type?: string | null
  version: number
  created_at: Date
  updated_at: Date
}

/** Static cohort membership, by distinct id (the person's other distinct ids count too). */
export interface CohortMemberDocument {
  project_id: number
  cohort_id: number
  distinct_id: string
  added_at: Date
}

/** Experience continuity: the identifier a person's continuity flag is hashed with (flags.md §4.3). */
export interface HashKeyOverrideDocument {
  project_id: number
  /** persons.id */
  person_id: string
  feature_flag_key: string
  hash_key: string
}

export interface VersionDocument {
  project_id: number
  /** The live generation; 0 until the first replacement. */
  generation: number
  /** +1 on every change of the live definitions; caches compare it. */
  version: number
  /** Last generation number handed out to a replacement (always ≥ generation). */
  reserved: number
  updated_at: Date
}

const INDEXES: Record<string, IndexDescription[]> = {
  [DECIDE_COLLECTIONS.flags]: [
    { key: { project_id: 1, generation: 1, id: 1 }, name: 'project_generation_id_unique', unique: true },
  ],
  [DECIDE_COLLECTIONS.cohorts]: [
    { key: { project_id: 1, generation: 1, id: 1 }, name: 'project_generation_id_unique', unique: true },
  ],
  [DECIDE_COLLECTIONS.cohortMembers]: [
    { key: { project_id: 1, cohort_id: 1, distinct_id: 1 }, name: 'project_cohort_distinct_id_unique', unique: true },
    { key: { project_id: 1, distinct_id: 1 }, name: 'project_distinct_id' },
  ],
  [DECIDE_COLLECTIONS.hashKeyOverrides]: [
    { key: { project_id: 1, person_id: 1, feature_flag_key: 1 }, name: 'project_person_flag_unique', unique: true },
  ],
  [DECIDE_COLLECTIONS.versions]: [{ key: { project_id: 1 }, name: 'project_unique', unique: true }],
}

export async function ensureDecideIndexes(db: Db): Promise<void> {
  for (const [collection, indexes] of Object.entries(INDEXES)) await db.collection(collection).createIndexes(indexes)
}

/** A flag or cohort as the audit log keeps it: the stored document without the storage fields. */
export function definitionState(doc: FlagDocument | CohortDocument): Record<string, unknown> {
  const { _id, project_id, generation, ...state } = doc as (FlagDocument | CohortDocument) & { _id?: unknown }
  return state
}
