import { cohortFiltersUnparseable } from './errors.ts'
import type { CohortDefinition, PropertyFilter } from './types.ts'

/**
 * A dynamic cohort's filters: an AND/OR group whose values are filters or groups again, to any
 * depth, as PostHog's flags service and the SDKs' local evaluators read them. A group is an entry
 * with a `values` list; anything else must be a filter with a `key`. Other shapes fail the flag
 * with `cohort_filters_parsing_error`.
 */
export type CohortNode =
  | { kind: 'group'; type: 'AND' | 'OR'; children: CohortNode[] }
  | { kind: 'leaf'; filter: PropertyFilter }

export type CohortTree = Extract<CohortNode, { kind: 'group' }>

/** PostHog's bound on nesting: deeper trees fail rather than recurse without limit. */
export const MAX_COHORT_FILTER_DEPTH = 64

/** Leaf types the server can evaluate from properties; others (behavioural) are non-matching leaves. */
const EVALUABLE_LEAF_TYPES = new Set(['person', 'group', 'cohort', 'flag', 'person_metadata'])

export function isCohortLeaf(filter: PropertyFilter): boolean {
  return filter.type === 'cohort'
}

export function isEvaluableLeaf(filter: PropertyFilter): boolean {
  return EVALUABLE_LEAF_TYPES.has(filter.type ?? 'person')
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `property` is PostHog's legacy name for AND, accepted below the top level only. */
function groupType(type: unknown, nested: boolean): 'AND' | 'OR' | null {
  if (type === 'AND' || type === 'OR') return type
  return nested && type === 'property' ? 'AND' : null
}

function parseNode(raw: unknown, depth: number, cohortId: number): CohortNode {
  if (depth > MAX_COHORT_FILTER_DEPTH || !isRecord(raw)) throw cohortFiltersUnparseable(cohortId)
  if (Array.isArray(raw.values)) {
    const type = groupType(raw.type, true)
    if (!type) throw cohortFiltersUnparseable(cohortId)
    return { kind: 'group', type, children: raw.values.map((child) => parseNode(child, depth + 1, cohortId)) }
  }
  if (typeof raw.key !== 'string') throw cohortFiltersUnparseable(cohortId)
  return { kind: 'leaf', filter: raw as unknown as PropertyFilter }
}

/** Parses `filters.properties`; null when the cohort has no filters at all (it then matches nobody). */
export function parseCohortTree(cohort: CohortDefinition): CohortTree | null {
  if (cohort.filters === null || cohort.filters === undefined) return null
  const properties = isRecord(cohort.filters) ? cohort.filters.properties : undefined
  const type = isRecord(properties) ? groupType(properties.type, false) : null
  if (!type || !isRecord(properties) || !Array.isArray(properties.values)) throw cohortFiltersUnparseable(cohort.id)
  return { kind: 'group', type, children: properties.values.map((child) => parseNode(child, 0, cohort.id)) }
}

/** Every filter of a tree, depth first. */
export function* cohortLeaves(node: CohortNode): Generator<PropertyFilter> {
  if (node.kind === 'leaf') yield node.filter
  else for (const child of node.children) yield* cohortLeaves(child)
}

/** A cohort filter's id: an integer, or (as flags.md §9 allows) a numeric string. */
export function cohortIdOf(filter: PropertyFilter): number | null {
  const value = filter.value
  if (typeof value === 'number' && Number.isInteger(value)) return value
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value)
  return null
}

/** Cohorts referenced inside a cohort (static cohorts have none, whatever their filters say). */
export function cohortDependencies(cohort: CohortDefinition): number[] {
  if (cohort.is_static) return []
  const tree = parseCohortTree(cohort)
  if (!tree) return []
  const ids: number[] = []
  for (const leaf of cohortLeaves(tree)) {
    if (!isCohortLeaf(leaf)) continue
    const id = cohortIdOf(leaf)
    if (id === null) throw cohortFiltersUnparseable(cohort.id)
    ids.push(id)
  }
  return ids
}
