import { normalizeDistinctId } from './hash.ts'
import { preparedFor } from './prepared.ts'
import type { PreparedFlags, Selection } from './prepared.ts'
import { needsDatabase } from './requirements.ts'
import type { DatabaseNeeds } from './requirements.ts'
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

/** What planning reads from one evaluable flag: the same for every request of a selection. */
interface PlannedFlag {
  key: string
  database: DatabaseNeeds
  groupTypeIndexes: readonly number[]
}

interface SelectionPlan {
  flagKeys: readonly string[]
  needsGroupTypeMapping: boolean
  flags: readonly PlannedFlag[]
}

/**
 * Each selection's flags with their needs, worked out on its first request: the service plans
 * every flags request, and a project's selections are kept (prepared.ts), so only the checks
 * against the request's person overrides remain per request.
 */
const selectionPlans = new WeakMap<Selection, SelectionPlan>()

function selectionPlan(prepared: PreparedFlags, selection: Selection): SelectionPlan {
  let plan = selectionPlans.get(selection)
  if (plan) return plan
  const flags = selection.evaluable.map((flag) => ({
    key: flag.key,
    database: prepared.databaseNeeds(flag),
    groupTypeIndexes: prepared.needs(flag).groupTypeIndexes,
  }))
  plan = {
    flagKeys: flags.map((flag) => flag.key),
    needsGroupTypeMapping: flags.some((flag) => flag.groupTypeIndexes.length > 0),
    flags,
  }
  selectionPlans.set(selection, plan)
  return plan
}

export function planEvaluation(input: PlanInput): EvaluationPlan {
  const prepared = preparedFor(input.flags, input.prepared)
  const selection = prepared.selection(input.flagKeys ?? null, input)
  const planned = selectionPlan(prepared, selection)
  const databaseFlagKeys: string[] = []
  const groupTypeIndexes: number[] = []
  for (const flag of planned.flags) {
    if (!needsDatabase(flag.database, input.personPropertyOverrides)) continue
    databaseFlagKeys.push(flag.key)
    for (const index of flag.groupTypeIndexes) if (!groupTypeIndexes.includes(index)) groupTypeIndexes.push(index)
  }
  const flagKeys = planned.flagKeys.slice()
  const needsGroupTypeMapping = planned.needsGroupTypeMapping
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
