import { cohortIdOf } from './cohort-tree.ts'
import { conditionAggregation } from './conditions.ts'
import { isFlagFilter } from './dependencies.ts'
import { enrollmentKey } from './flag.ts'
import { lookupKey } from './properties/match-property.ts'
import type { ConditionSet, FlagDefinition, Properties } from './types.ts'

/**
 * What a flag needs from storage, so the caller can skip the database when
 * the request's overrides already answer (§7.1, §11) and knows which flags
 * fail when it cannot be reached.
 */

const rolledOutToSome = (condition: ConditionSet) => (condition.rollout_percentage ?? 100) > 0

/**
 * The server's test, split into what the definitions alone decide and the override keys that
 * decide the rest: a flag reads the database when it is group-aggregated, has a rolled-out set
 * with a cohort filter, or when any of `keys` is missing from the request's person overrides (the
 * enrollment key, and the property keys of rolled-out sets, legacy super groups included; keys
 * are compared as written, so a group filter is satisfied by a person override of the same name,
 * as on the server).
 */
export interface DatabaseNeeds {
  always: boolean
  keys: readonly string[]
}

export function databaseNeeds(flag: FlagDefinition): DatabaseNeeds {
  const filters = flag.filters ?? {}
  const keys = new Set<string>()
  if (filters.feature_enrollment === true) keys.add(enrollmentKey(flag.key))
  let always = filters.aggregation_group_type_index !== null && filters.aggregation_group_type_index !== undefined
  const addSet = (set: ConditionSet, cohortsRead: boolean) => {
    if (!rolledOutToSome(set)) return
    for (const filter of set.properties ?? []) {
      if (filter.type === 'cohort') always ||= cohortsRead
      else if (!isFlagFilter(filter)) keys.add(filter.key)
    }
  }
  for (const set of filters.super_groups ?? []) addSet(set, false)
  for (const set of filters.groups ?? []) addSet(set, true)
  return { always, keys: [...keys] }
}

export function needsDatabase(needs: DatabaseNeeds, personOverrides: Properties | null | undefined): boolean {
  if (needs.always) return true
  for (const key of needs.keys) if (!personOverrides || !Object.hasOwn(personOverrides, key)) return true
  return false
}

/** Whether the flag reads the database for a request with these person overrides (§7.1, §11). */
export function flagRequiresDatabase(flag: FlagDefinition, personOverrides: Properties | null | undefined): boolean {
  return needsDatabase(databaseNeeds(flag), personOverrides)
}

export interface PropertyNeeds {
  /** Person property keys read (person and person_metadata filters, enrollment, legacy super groups). */
  person: string[]
  /** Group property keys read, by group type index. */
  groups: Record<number, string[]>
  /** Cohorts referenced directly by condition sets. */
  cohortIds: number[]
  /** Group type indexes whose key the flag hashes or whose properties it reads. */
  groupTypeIndexes: number[]
  /** Keys (or ids as written) of flags depended on. */
  flagDependencies: string[]
}

export function propertyNeeds(flag: FlagDefinition): PropertyNeeds {
  const person = new Set<string>()
  const groups = new Map<number, Set<string>>()
  const cohortIds = new Set<number>()
  const groupTypeIndexes = new Set<number>()
  const flagDependencies = new Set<string>()
  const filters = flag.filters ?? {}
  if (filters.feature_enrollment === true) person.add(enrollmentKey(flag.key))
  for (const filter of filters.super_groups?.[0]?.properties ?? []) person.add(filter.key)
  if (filters.aggregation_group_type_index !== null && filters.aggregation_group_type_index !== undefined) {
    groupTypeIndexes.add(filters.aggregation_group_type_index)
  }
  for (const condition of filters.groups ?? []) {
    const aggregation = conditionAggregation(flag, condition)
    if (aggregation !== null) groupTypeIndexes.add(aggregation)
    for (const filter of condition.properties ?? []) {
      const type = filter.type ?? 'person'
      if (type === 'cohort') {
        const id = cohortIdOf(filter)
        if (id !== null) cohortIds.add(id)
      } else if (type === 'flag') {
        flagDependencies.add(filter.key)
      } else if (type === 'group') {
        const index = filter.group_type_index ?? aggregation
        if (index === null || index === undefined) continue
        groupTypeIndexes.add(index)
        if (!groups.has(index)) groups.set(index, new Set())
        groups.get(index)?.add(filter.key)
      } else {
        person.add(lookupKey(filter))
      }
    }
  }
  return {
    person: [...person],
    groups: Object.fromEntries([...groups].map(([index, keys]) => [index, [...keys]])),
    cohortIds: [...cohortIds],
    groupTypeIndexes: [...groupTypeIndexes],
    flagDependencies: [...flagDependencies],
  }
}

/** Whether the flag's outcome can depend on which identifier is hashed, i.e. on a hash-key override. */
export function flagNeedsHashKeyOverride(flag: FlagDefinition): boolean {
  if (!flag.ensure_experience_continuity) return false
  if ((flag.filters.multivariate?.variants ?? []).length > 0) return true
  return (flag.filters.groups ?? []).some((condition) => (condition.rollout_percentage ?? 100) !== 100)
}
