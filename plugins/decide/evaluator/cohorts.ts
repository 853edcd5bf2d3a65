import {
  cohortDependencies,
  cohortIdOf,
  isCohortLeaf,
  isEvaluableLeaf,
  parseCohortTree,
  type CohortNode,
} from './cohort-tree.ts'
import { cohortCycle, cohortFiltersUnparseable, cohortNotFound } from './errors.ts'
import { matchProperty, type MatchContext } from './properties/match-property.ts'
import type { CohortDefinition, EvaluationInput, Properties, PropertyFilter } from './types.ts'

/**
 * Cohort membership (§9): static cohorts from stored membership, dynamic ones
 * from the merged person properties, nested cohorts first. A deleted or
 * unknown cohort, a cycle or malformed filters fail only the flag asking.
 */

export type CohortIndex = Map<number, CohortDefinition>

const MEMBERSHIP_STORE_TYPES = new Set(['behavioral', 'realtime'])

function isBarePropertyGroup(value: unknown): value is { type: string; values: unknown[] } {
  return typeof value === 'object' && value !== null && 'type' in value && 'values' in value
}

/** Accepts PostHog cohort rows, as a list or by id, and the SDK format `{ "<id>": <property group> }`. */
export function indexCohorts(cohorts: EvaluationInput['cohorts']): CohortIndex {
  const index: CohortIndex = new Map()
  const entries: [string, unknown][] = Array.isArray(cohorts)
    ? cohorts.map((c) => [String(c.id), c])
    : Object.entries(cohorts ?? {})
  for (const [key, raw] of entries) {
    const cohort: CohortDefinition = isBarePropertyGroup(raw)
      ? { id: Number(key), filters: { properties: raw } }
      : (raw as CohortDefinition)
    if (!cohort || cohort.deleted || !Number.isFinite(Number(cohort.id))) continue
    index.set(Number(cohort.id), { ...cohort, id: Number(cohort.id) })
  }
  return index
}

export interface CohortContext {
  cohorts: CohortIndex
  /** Static cohort id → member?, known only when a person was loaded; empty otherwise. */
  staticMembership: ReadonlyMap<number, boolean>
  match: MatchContext
  /**
   * Memberships already computed for this person in this request: a cohort used by several flags
   * is evaluated once. Used only for the person object it was made for.
   */
  known?: { person: Properties; members: Map<number, boolean> }
}

const NO_MEMBERSHIP: ReadonlyMap<number, boolean> = new Map()

export function staticMembershipFor(cohorts: CohortIndex, memberOf: number[] | null): ReadonlyMap<number, boolean> {
  if (memberOf === null) return NO_MEMBERSHIP
  let members: Set<number> | undefined
  let membership: Map<number, boolean> | undefined
  for (const cohort of cohorts.values())
    if (cohort.is_static) {
      members ??= new Set(memberOf)
      membership ??= new Map()
      membership.set(cohort.id, members.has(cohort.id))
    }
  return membership ?? NO_MEMBERSHIP
}

/** IN / NOT_IN (default IN) over known results; any other operator never matches. */
function membershipMatches(filter: PropertyFilter, results: Map<number, boolean>, cohortOwner: number | null): boolean {
  const id = cohortIdOf(filter)
  if (id === null) throw cohortFiltersUnparseable(cohortOwner)
  return operatorMatches(filter, results.get(id) ?? false)
}

function operatorMatches(filter: PropertyFilter, member: boolean): boolean {
  const operator = filter.operator ?? 'in'
  if (operator === 'in') return member
  if (operator === 'not_in') return !member
  return false
}

function leafMatches(leaf: PropertyFilter, person: Properties, ctx: MatchContext): boolean {
  // Behavioural leaves cannot be computed from properties: they never match, negated or not.
  if (!isEvaluableLeaf(leaf)) return false
  const result = matchProperty(leaf, person, ctx)
  return leaf.negation ? !result : result
}

/**
 * A group is AND or OR over its entries, to any depth; `negation` inverts a nested cohort's
 * membership as it does a property filter's, in AND and OR groups alike (PostHog's flags service
 * and the SDKs' local evaluators agree on this).
 */
function nodeMatches(
  node: CohortNode,
  person: Properties,
  results: Map<number, boolean>,
  ctx: MatchContext,
  owner: number,
): boolean {
  if (node.kind === 'leaf') {
    const leaf = node.filter
    if (!isCohortLeaf(leaf)) return leafMatches(leaf, person, ctx)
    return membershipMatches(leaf, results, owner) !== Boolean(leaf.negation)
  }
  const matches = (child: CohortNode) => nodeMatches(child, person, results, ctx, owner)
  return node.type === 'OR' ? node.children.some(matches) : node.children.every(matches)
}

/**
 * A derivation's value or failure, kept: cohort definitions are read-only once indexed, and
 * deriving their trees and dependency orders anew for every request was most of a cohort filter's
 * cost. A failure is thrown again on each use, as deriving again would.
 */
type Settled<T> = { value: T } | { error: unknown }

function settle<T>(derive: () => T): Settled<T> {
  try {
    return { value: derive() }
  } catch (error) {
    return { error }
  }
}

function unwrap<T>(settled: Settled<T>): T {
  if ('error' in settled) throw settled.error
  return settled.value
}

const trees = new WeakMap<CohortDefinition, Settled<ReturnType<typeof parseCohortTree>>>()

function cohortTree(cohort: CohortDefinition): ReturnType<typeof parseCohortTree> {
  let settled = trees.get(cohort)
  if (settled === undefined) trees.set(cohort, (settled = settle(() => parseCohortTree(cohort))))
  return unwrap(settled)
}

function dynamicCohortMatches(
  cohort: CohortDefinition,
  person: Properties,
  results: Map<number, boolean>,
  ctx: MatchContext,
): boolean {
  if (MEMBERSHIP_STORE_TYPES.has(cohort.cohort_type ?? '')) return false
  const tree = cohortTree(cohort)
  return tree ? nodeMatches(tree, person, results, ctx, cohort.id) : false
}

const orders = new WeakMap<CohortIndex, Map<number, Settled<CohortDefinition[]>>>()

function dependencyOrder(rootId: number, cohorts: CohortIndex): CohortDefinition[] {
  let byRoot = orders.get(cohorts)
  if (byRoot === undefined) orders.set(cohorts, (byRoot = new Map()))
  let settled = byRoot.get(rootId)
  if (settled === undefined) byRoot.set(rootId, (settled = settle(() => deriveDependencyOrder(rootId, cohorts))))
  return unwrap(settled)
}

/** Dependencies-first order of the cohorts reachable from `rootId`; throws on unknown ids and cycles. */
function deriveDependencyOrder(rootId: number, cohorts: CohortIndex): CohortDefinition[] {
  const order: CohortDefinition[] = []
  const state = new Map<number, 'visiting' | 'done'>()
  const visit = (id: number) => {
    if (state.get(id) === 'done') return
    if (state.get(id) === 'visiting') throw cohortCycle(id)
    const cohort = cohorts.get(id)
    if (!cohort) throw cohortNotFound(id)
    state.set(id, 'visiting')
    for (const dependency of cohortDependencies(cohort)) visit(dependency)
    state.set(id, 'done')
    order.push(cohort)
  }
  visit(rootId)
  return order
}

/** Whether the person is in cohort `id`, evaluating nested cohorts first. */
export function cohortMembership(id: number, person: Properties, ctx: CohortContext): boolean {
  const root = ctx.cohorts.get(id)
  if (!root) throw cohortNotFound(id)
  if (root.is_static) return ctx.staticMembership.get(id) ?? false
  const results = new Map<number, boolean>()
  for (const cohort of dependencyOrder(id, ctx.cohorts)) {
    const member = cohort.is_static
      ? (ctx.staticMembership.get(cohort.id) ?? false)
      : dynamicCohortMatches(cohort, person, results, ctx.match)
    results.set(cohort.id, member)
  }
  return results.get(id) ?? false
}

/** cohortMembership, remembered for the rest of the request (failures are not remembered: they throw again). */
function knownMembership(id: number, person: Properties, ctx: CohortContext): boolean {
  const known = ctx.known?.person === person ? ctx.known.members : undefined
  const found = known?.get(id)
  if (found !== undefined) return found
  const member = cohortMembership(id, person, ctx)
  known?.set(id, member)
  return member
}

/** All cohort filters of one condition set must hold (AND); `negation` on a flag's cohort filter is ignored. */
export function cohortFiltersMatch(filters: PropertyFilter[], person: Properties, ctx: CohortContext): boolean {
  // every filter's cohort is resolved before any is judged: one that fails fails the flag, matching or not
  const members: boolean[] = []
  for (const filter of filters) {
    const id = cohortIdOf(filter)
    if (id === null) throw cohortFiltersUnparseable()
    members.push(ctx.staticMembership.get(id) ?? knownMembership(id, person, ctx))
  }
  return filters.every((filter, i) => operatorMatches(filter, members[i]!))
}
