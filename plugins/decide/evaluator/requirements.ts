import { cohortIdOf } from './cohort-tree.ts';
import { conditionAggregation } from './conditions.ts';
import { isFlagFilter } from './dependencies.ts';
import { enrollmentKey } from './flag.ts';
import { lookupKey } from './properties/match-property.ts';
import type { ConditionSet, FlagDefinition, Properties } from './types.ts';

/**
 * What a flag needs from storage, so the caller can skip the database when
 * the request's overrides already answer (§7.1, §11) and knows which flags
 * fail when it cannot be reached.
 */

const rolledOutToSome = (condition: ConditionSet) => (condition.rollout_percentage ?? 100) > 0;

function setNeedsStoredProperties(condition: ConditionSet, overrides: Properties): boolean {
  return (
    rolledOutToSome(condition) &&
    (condition.properties ?? []).some(
      (filter) => filter.type !== 'cohort' && !isFlagFilter(filter) && !Object.prototype.hasOwnProperty.call(overrides, filter.key),
    )
  );
}

/**
 * The server's test: group-aggregated flags, enrollment not answered by the
 * overrides, a rolled-out set with a property the overrides lack, or a
 * rolled-out set with a cohort filter. (Keys are compared as written, so a
 * group filter is satisfied by a person override of the same name, as on the
 * server.)
 */
export function flagRequiresDatabase(flag: FlagDefinition, personOverrides: Properties | null | undefined): boolean {
  const overrides = personOverrides ?? {};
  const filters = flag.filters ?? {};
  if (filters.aggregation_group_type_index !== null && filters.aggregation_group_type_index !== undefined) return true;
  if (filters.feature_enrollment === true && !Object.prototype.hasOwnProperty.call(overrides, enrollmentKey(flag.key))) return true;
  if ((filters.super_groups ?? []).some((set) => setNeedsStoredProperties(set, overrides))) return true;
  const groups = filters.groups ?? [];
  if (groups.some((set) => setNeedsStoredProperties(set, overrides))) return true;
  return groups.some((set) => rolledOutToSome(set) && (set.properties ?? []).some((filter) => filter.type === 'cohort'));
}

export interface PropertyNeeds {
  /** Person property keys read (person and person_metadata filters, enrollment, legacy super groups). */
  person: string[];
  /** Group property keys read, by group type index. */
  groups: Record<number, string[]>;
  /** Cohorts referenced directly by condition sets. */
  cohortIds: number[];
  /** Group type indexes whose key the flag hashes or whose properties it reads. */
  groupTypeIndexes: number[];
  /** Keys (or ids as written) of flags depended on. */
  flagDependencies: string[];
}

export function propertyNeeds(flag: FlagDefinition): PropertyNeeds {
  const person = new Set<string>();
  const groups = new Map<number, Set<string>>();
  const cohortIds = new Set<number>();
  const groupTypeIndexes = new Set<number>();
  const flagDependencies = new Set<string>();
  const filters = flag.filters ?? {};
  if (filters.feature_enrollment === true) person.add(enrollmentKey(flag.key));
  for (const filter of filters.super_groups?.[0]?.properties ?? []) person.add(filter.key);
  if (filters.aggregation_group_type_index !== null && filters.aggregation_group_type_index !== undefined) {
    groupTypeIndexes.add(filters.aggregation_group_type_index);
  }
  for (const condition of filters.groups ?? []) {
    const aggregation = conditionAggregation(flag, condition);
    if (aggregation !== null) groupTypeIndexes.add(aggregation);
    for (const filter of condition.properties ?? []) {
      const type = filter.type ?? 'person';
      if (type === 'cohort') {
        const id = cohortIdOf(filter);
        if (id !== null) cohortIds.add(id);
      } else if (type === 'flag') {
        flagDependencies.add(filter.key);
      } else if (type === 'group') {
        const index = filter.group_type_index ?? aggregation;
        if (index === null || index === undefined) continue;
        groupTypeIndexes.add(index);
        if (!groups.has(index)) groups.set(index, new Set());
        groups.get(index)?.add(filter.key);
      } else {
        person.add(lookupKey(filter));
      }
    }
  }
  return {
    person: [...person],
    groups: Object.fromEntries([...groups].map(([index, keys]) => [index, [...keys]])),
    cohortIds: [...cohortIds],
    groupTypeIndexes: [...groupTypeIndexes],
    flagDependencies: [...flagDependencies],
  };
}

/** Whether the flag's outcome can depend on which identifier is hashed, i.e. on a hash-key override. */
export function flagNeedsHashKeyOverride(flag: FlagDefinition): boolean {
  if (!flag.ensure_experience_continuity) return false;
  if ((flag.filters.multivariate?.variants ?? []).length > 0) return true;
  return (flag.filters.groups ?? []).some((condition) => (condition.rollout_percentage ?? 100) !== 100);
}
