import type { CohortContext } from './cohorts.ts'
import type { FlagLookup } from './dependencies.ts'
import type { MatchContext } from './properties/match-property.ts'
import type { Properties } from './types.ts'

/** Everything one request's flags are evaluated against, prepared once by evaluate.ts. */
export interface RequestContext {
  lookup: FlagLookup
  distinctId: string
  /** Empty device ids are absent (§4.4). */
  deviceId: string | null
  anonDistinctId: string | null
  /** Merged person properties (§7.1). */
  person: Properties
  /** Group key as hashed (§4.2) and whether it is usable (§3c), by group type index. */
  groupKey(index: number): { text: string; usable: boolean }
  /** Stored group properties with the request's overrides merged over them (§7.2). */
  groupProperties(index: number): Properties
  hashKeyOverrides: Record<string, string> | null
  /** Null when cohort definitions were not loaded (the database was not queried). */
  cohorts: CohortContext | null
  match: MatchContext
  /** Values of flags evaluated so far, by flag id; excluded flags are seeded as false. */
  results: Map<number, boolean | string>
}
