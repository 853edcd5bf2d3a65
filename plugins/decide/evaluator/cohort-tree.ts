import { cohortFiltersUnparseable } from './errors.ts';
import type { CohortDefinition, PropertyFilter } from './types.ts';

/**
 * A dynamic cohort's filters: an outer AND/OR over inner groups, each an
 * AND/OR/"property" group of leaves. The server rejects any other shape with
 * `cohort_filters_parsing_error`, which fails the flag.
 */
export interface CohortTree {
  type: 'AND' | 'OR';
  groups: { type: string; leaves: PropertyFilter[] }[];
}

/** Leaf types the server can evaluate from properties; others (behavioural) are non-matching leaves. */
const EVALUABLE_LEAF_TYPES = new Set(['person', 'group', 'cohort', 'flag', 'person_metadata']);

export function isCohortLeaf(filter: PropertyFilter): boolean {
  return filter.type === 'cohort';
}

export function isEvaluableLeaf(filter: PropertyFilter): boolean {
  return EVALUABLE_LEAF_TYPES.has(filter.type ?? 'person');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseLeaf(raw: unknown, cohortId: number): PropertyFilter {
  if (!isRecord(raw) || typeof raw.key !== 'string') throw cohortFiltersUnparseable(cohortId);
  return raw as unknown as PropertyFilter;
}

/** Parses `filters.properties`; null when the cohort has no filters at all (it then matches nobody). */
export function parseCohortTree(cohort: CohortDefinition): CohortTree | null {
  if (cohort.filters === null || cohort.filters === undefined) return null;
  const properties = isRecord(cohort.filters) ? cohort.filters.properties : undefined;
  if (!isRecord(properties) || (properties.type !== 'AND' && properties.type !== 'OR') || !Array.isArray(properties.values)) {
    throw cohortFiltersUnparseable(cohort.id);
  }
  const groups = properties.values.map((group) => {
    if (!isRecord(group) || typeof group.type !== 'string' || !Array.isArray(group.values)) {
      throw cohortFiltersUnparseable(cohort.id);
    }
    return { type: group.type, leaves: group.values.map((leaf) => parseLeaf(leaf, cohort.id)) };
  });
  return { type: properties.type, groups };
}

/** A cohort filter's id: an integer, or (as flags.md §9 allows) a numeric string. */
export function cohortIdOf(filter: PropertyFilter): number | null {
  const value = filter.value;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  return null;
}

/** Cohorts referenced inside a cohort (static cohorts have none, whatever their filters say). */
export function cohortDependencies(cohort: CohortDefinition): number[] {
  if (cohort.is_static) return [];
  const tree = parseCohortTree(cohort);
  if (!tree) return [];
  const ids: number[] = [];
  for (const group of tree.groups) {
    for (const leaf of group.leaves) {
      if (!isCohortLeaf(leaf)) continue;
      const id = cohortIdOf(leaf);
      if (id === null) throw cohortFiltersUnparseable(cohort.id);
      ids.push(id);
    }
  }
  return ids;
}
