import { normalizeDistinctId } from './hash.ts'
import { preparedFor } from './prepared.ts'
import { needsDatabase } from './requirements.ts'
import type { EvaluationInput } from './types.ts'

export type PlanInput = Pick<
  EvaluationInput,
  | 'flags'
  | 'prepared'
  | 'flagKeys'
  | 'personPropertyOverrides'
  | 'distinctId'
  | 'anonDistinctId'
  | 'runtime'
  | 'evaluationContexts'
  | 'onlySurveyFlags'
>

/**
 * What the caller must fetch before calling evaluateFlags, so it touches
 * storage only when some flag needs it (§7.1, §11).
 */
export interface EvaluationPlan {
  /** Keys that will be in the response (requested flags and their dependencies, minus excluded ones). */
  flagKeys: string[]
  /** Flags that fail if the database cannot be read. */
  databaseFlagKeys: string[]
  /** Load the person (by distinct id), static cohort membership, cohorts and group rows. */
  needsDatabase: boolean
  /** Group types whose stored group row (for the request's key) the flags may read. */
  groupTypeIndexes: number[]
  needsGroupTypeMapping: boolean
  hashKeyOverrides: {
    /** Read stored overrides for these distinct ids (the first one's person has priority). */
    lookup: string[] | null
    /**
     * Before reading: for each person of these distinct ids, store `hashKey`
     * for every listed flag it has no override for yet (§4.3).
     */
    write: { hashKey: string; distinctIds: string[]; flagKeys: string[] } | null
  }
}

export function planEvaluation(input: PlanInput): EvaluationPlan {
  const prepared = preparedFor(input.flags, input.prepared)
  const selection = prepared.selection(input.flagKeys ?? null, input)
  const flagKeys: string[] = []
  const databaseFlagKeys: string[] = []
  const groupTypeIndexes: number[] = []
  let needsGroupTypeMapping = false
  for (const flag of selection.evaluable) {
    flagKeys.push(flag.key)
    const indexes = prepared.needs(flag).groupTypeIndexes
    if (indexes.length > 0) needsGroupTypeMapping = true
    if (!needsDatabase(prepared.databaseNeeds(flag), input.personPropertyOverrides)) continue
    databaseFlagKeys.push(flag.key)
    for (const index of indexes) if (!groupTypeIndexes.includes(index)) groupTypeIndexes.push(index)
  }
  const distinctId = normalizeDistinctId(input.distinctId)
  const anon = input.anonDistinctId ?? null
  const lookupNeeded = selection.needsHashKeyOverride
  return {
    flagKeys,
    databaseFlagKeys,
    needsDatabase: databaseFlagKeys.length > 0,
    groupTypeIndexes: groupTypeIndexes.sort((a, b) => a - b),
    needsGroupTypeMapping,
    hashKeyOverrides: {
      lookup: lookupNeeded ? (anon === null ? [distinctId] : [distinctId, anon]) : null,
      write:
        lookupNeeded && anon !== null
          ? { hashKey: anon, distinctIds: [distinctId, anon], flagKeys: [...prepared.continuityKeys] }
          : null,
    },
  }
}
