import type { FlagDefinition, PropertyFilter } from './types.ts'

/**
 * Flag-on-flag dependencies (§8b). Server definitions name the dependency by
 * id ("key": "42"); SDK definitions by key, with a dependency_chain. Both are
 * resolved here. Flags are evaluated in stages, dependencies first; a flag
 * whose dependency is missing, cyclic or transitively broken answers
 * `missing_dependency`, and a cycle also flags the response as erroneous.
 */

export interface FlagLookup {
  byId: Map<number, FlagDefinition>
  byKey: Map<string, FlagDefinition>
}

export function lookupFlags(flags: readonly FlagDefinition[]): FlagLookup {
  return {
    byId: new Map(flags.map((flag) => [flag.id, flag])),
    byKey: new Map(flags.map((flag) => [flag.key, flag])),
  }
}

export function isFlagFilter(filter: PropertyFilter): boolean {
  return filter.type === 'flag'
}

/** The depended-on flag's id: the key read as an id first (server format), else as a flag key (SDK format). */
export function dependencyTarget(filter: PropertyFilter, lookup: FlagLookup): number | 'missing' {
  if (/^-?\d+$/.test(filter.key)) {
    const byId = lookup.byId.get(Number(filter.key))
    if (byId) return byId.id
  }
  const byKey = lookup.byKey.get(filter.key)
  return byKey ? byKey.id : 'missing'
}

export function directDependencies(flag: FlagDefinition, lookup: FlagLookup): (number | 'missing')[] {
  const targets: (number | 'missing')[] = []
  for (const group of flag.filters?.groups ?? []) {
    for (const filter of group.properties ?? []) {
      if (isFlagFilter(filter)) targets.push(dependencyTarget(filter, lookup))
    }
  }
  return targets
}

export interface DependencyPlan {
  /** Flags to evaluate, grouped so that every flag's dependencies sit in earlier stages. */
  stages: FlagDefinition[][]
  /** Flag ids that answer `missing_dependency` (missing, cyclic or depending on such). */
  brokenIds: Set<number>
  hasCycle: boolean
}

/** The requested flags (all when `keys` is null) and, transitively, what they depend on. */
function selectFlags(
  flags: readonly FlagDefinition[],
  lookup: FlagLookup,
  keys: readonly string[] | null,
): FlagDefinition[] {
  if (keys === null) return [...flags]
  const selected = new Map<number, FlagDefinition>()
  const queue = keys.map((key) => lookup.byKey.get(key)).filter((flag): flag is FlagDefinition => flag !== undefined)
  while (queue.length > 0) {
    const flag = queue.pop() as FlagDefinition
    if (selected.has(flag.id)) continue
    selected.set(flag.id, flag)
    for (const target of directDependencies(flag, lookup)) {
      if (target !== 'missing' && !selected.has(target)) queue.push(lookup.byId.get(target) as FlagDefinition)
    }
  }
  return flags.filter((flag) => selected.has(flag.id))
}

export function planDependencies(
  flags: readonly FlagDefinition[],
  keys: readonly string[] | null = null,
  lookup = lookupFlags(flags),
): DependencyPlan {
  const selected = selectFlags(flags, lookup, keys)
  const dependencies = new Map(selected.map((flag) => [flag.id, directDependencies(flag, lookup)]))
  const brokenIds = new Set<number>()
  const remaining = new Map<number, Set<number>>()
  for (const flag of selected) {
    const targets = dependencies.get(flag.id) ?? []
    if (targets.includes('missing')) brokenIds.add(flag.id)
    remaining.set(flag.id, new Set(targets.filter((t): t is number => t !== 'missing')))
  }

  // Kahn's algorithm: each stage holds the flags whose dependencies are all placed.
  const byId = new Map(selected.map((flag) => [flag.id, flag]))
  const pending = new Map<number, number>()
  const dependents = new Map<number, number[]>()
  for (const flag of selected) {
    const targets = remaining.get(flag.id) ?? new Set<number>()
    pending.set(flag.id, targets.size)
    for (const target of targets) dependents.set(target, [...(dependents.get(target) ?? []), flag.id])
  }
  const stages: FlagDefinition[][] = []
  const placed = new Set<number>()
  let ready = selected.filter((flag) => pending.get(flag.id) === 0)
  while (ready.length > 0) {
    ready.sort((a, b) => a.id - b.id)
    stages.push(ready)
    const next: FlagDefinition[] = []
    for (const flag of ready) {
      placed.add(flag.id)
      for (const dependent of dependents.get(flag.id) ?? []) {
        const left = (pending.get(dependent) ?? 0) - 1
        pending.set(dependent, left)
        if (left === 0) next.push(byId.get(dependent) as FlagDefinition)
      }
    }
    ready = next
  }

  // Whatever could not be placed sits on or behind a cycle.
  const unplaced = selected.filter((flag) => !placed.has(flag.id))
  for (const flag of unplaced) brokenIds.add(flag.id)
  if (unplaced.length > 0) stages.push(unplaced.sort((a, b) => a.id - b.id))

  // Anything depending, even indirectly, on a broken flag is broken too; stages run in order, so one pass suffices.
  for (const stage of stages) {
    for (const flag of stage) {
      if ([...(remaining.get(flag.id) ?? [])].some((d) => brokenIds.has(d))) brokenIds.add(flag.id)
    }
  }
  return { stages, brokenIds, hasCycle: unplaced.length > 0 }
}

/** `flag_evaluates_to`: true matches any enabled value, false only false, a string only that variant. */
export function flagValueMatches(filter: PropertyFilter, value: boolean | string | undefined): boolean {
  if (filter.operator !== 'flag_evaluates_to' || value === undefined) return false
  if (filter.value === true) return value !== false
  if (filter.value === false) return value === false
  if (typeof filter.value === 'string') return value === filter.value
  return false
}
