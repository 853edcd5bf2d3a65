import { isFlagExcluded } from './filtering.ts';
import { normalizeDistinctId } from './hash.ts';
import { planFor, preparedFor } from './prepared.ts';
import { flagNeedsHashKeyOverride, flagRequiresDatabase } from './requirements.ts';
import type { EvaluationInput } from './types.ts';

export type PlanInput = Pick<
  EvaluationInput,
  'flags' | 'prepared' | 'flagKeys' | 'personPropertyOverrides' | 'distinctId' | 'anonDistinctId' | 'runtime' | 'evaluationContexts' | 'onlySurveyFlags'
>;

/**
 * What the caller must fetch before calling evaluateFlags, so it touches
 * storage only when some flag needs it (§7.1, §11).
 */
export interface EvaluationPlan {
  /** Keys that will be in the response (requested flags and their dependencies, minus excluded ones). */
  flagKeys: string[];
  /** Flags that fail if the database cannot be read. */
  databaseFlagKeys: string[];
  /** Load the person (by distinct id), static cohort membership, cohorts and group rows. */
  needsDatabase: boolean;
  /** Group types whose stored group row (for the request's key) the flags may read. */
  groupTypeIndexes: number[];
  needsGroupTypeMapping: boolean;
  hashKeyOverrides: {
    /** Read stored overrides for these distinct ids (the first one's person has priority). */
    lookup: string[] | null;
    /**
     * Before reading: for each person of these distinct ids, store `hashKey`
     * for every listed flag it has no override for yet (§4.3).
     */
    write: { hashKey: string; distinctIds: string[]; flagKeys: string[] } | null;
  };
}

export function planEvaluation(input: PlanInput): EvaluationPlan {
  const prepared = preparedFor(input.flags, input.prepared);
  const { flags } = prepared;
  const evaluable = planFor(prepared, input.flagKeys ?? null)
    .stages.flat()
    .filter((flag) => !isFlagExcluded(flag, input));
  const databaseFlags = evaluable.filter((flag) => flagRequiresDatabase(flag, input.personPropertyOverrides));
  const groupTypeIndexes = new Set(databaseFlags.flatMap((flag) => prepared.needs(flag).groupTypeIndexes));
  const distinctId = normalizeDistinctId(input.distinctId);
  const anon = input.anonDistinctId ?? null;
  const lookupNeeded = evaluable.some(flagNeedsHashKeyOverride);
  const continuityKeys = flags.filter((f) => f.active && !f.deleted && f.ensure_experience_continuity).map((f) => f.key);
  return {
    flagKeys: evaluable.map((flag) => flag.key),
    databaseFlagKeys: databaseFlags.map((flag) => flag.key),
    needsDatabase: databaseFlags.length > 0,
    groupTypeIndexes: [...groupTypeIndexes].sort((a, b) => a - b),
    needsGroupTypeMapping: evaluable.some((flag) => prepared.needs(flag).groupTypeIndexes.length > 0),
    hashKeyOverrides: {
      lookup: lookupNeeded ? (anon === null ? [distinctId] : [distinctId, anon]) : null,
      write: lookupNeeded && anon !== null ? { hashKey: anon, distinctIds: [distinctId, anon], flagKeys: continuityKeys } : null,
    },
  };
}
