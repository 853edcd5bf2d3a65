/**
 * The local-evaluation format PostHog serves at /flags/definitions (and at the older
 * /api/feature_flag/local_evaluation): deleted flags left out, flag dependencies rewritten from
 * ids to keys with a `dependency_chain` (the keys to evaluate first, topologically sorted and
 * ending with the dependency itself; empty for a missing or cyclic dependency), and the dynamic
 * cohorts the flags reach as `{ "<id>": <property group> }`. Static cohorts are absent, which
 * SDKs read as "ask the server".
 */
import { cohortDependencies, cohortIdOf } from './evaluator/cohort-tree.ts'
import { bucketingIdentifierOf } from './evaluator/identifiers.ts'
import type { CohortDefinition, PropertyFilter } from './evaluator/index.ts'
import { toCohortDefinition } from './store/definitions.ts'
import type { CohortDocument, FlagDocument } from './store/documents.ts'

export interface SdkDefinitions {
  flags: Record<string, unknown>[]
  group_type_mapping: Record<string, string>
  cohorts: Record<string, unknown>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function dependencyFilters(flag: FlagDocument): PropertyFilter[] {
  return (flag.filters.groups ?? []).flatMap((group) =>
    (group?.properties ?? []).filter((filter) => filter?.type === 'flag'),
  )
}

/** Resolves dependency filters the way the evaluator does: by id first, then by key. */
function resolver(flags: FlagDocument[]) {
  const byId = new Map(flags.map((flag) => [flag.id, flag]))
  const byKey = new Map(flags.map((flag) => [flag.key, flag]))
  return (key: unknown): FlagDocument | undefined => {
    if (typeof key !== 'string') return undefined
    return (/^-?\d+$/.test(key) ? byId.get(Number(key)) : undefined) ?? byKey.get(key)
  }
}

/** For each flag id: the keys to evaluate before it and itself last, or null if a dependency is missing or cyclic. */
export function dependencyChains(flags: FlagDocument[]): Map<number, string[] | null> {
  const resolve = resolver(flags)
  const byId = new Map(flags.map((flag) => [flag.id, flag]))
  const chains = new Map<number, string[] | null>()
  const onPath = new Set<number>()
  const chainOf = (id: number): string[] | null => {
    const known = chains.get(id)
    if (known !== undefined) return known
    if (onPath.has(id)) return null // a node reaching its own ancestor sits on a cycle, as does everything above it
    const flag = byId.get(id) as FlagDocument
    onPath.add(id)
    let chain: string[] | null = []
    for (const filter of dependencyFilters(flag)) {
      const target = resolve(filter.key)
      const sub = target ? chainOf(target.id) : null
      if (sub === null) {
        chain = null
        break
      }
      for (const key of sub) if (!chain.includes(key)) chain.push(key)
    }
    onPath.delete(id)
    if (chain !== null) chain.push(flag.key)
    chains.set(id, chain)
    return chain
  }
  // recursion depth is the longest dependency path, bounded by the number of flags of a project
  for (const flag of flags) chainOf(flag.id)
  return chains
}

/** A flag's filters with every dependency rewritten to the depended-on key and its chain. */
function rewriteDependencies(
  flag: FlagDocument,
  resolve: (key: unknown) => FlagDocument | undefined,
  chains: Map<number, string[] | null>,
) {
  const filters = structuredClone(flag.filters)
  for (const group of filters.groups ?? []) {
    for (const filter of group?.properties ?? []) {
      if (filter?.type !== 'flag') continue
      const target = resolve(filter.key)
      if (target) filter.key = target.key
      filter.dependency_chain = target ? [...(chains.get(target.id) ?? [])] : []
    }
  }
  return filters
}

export function sdkFlag(
  flag: FlagDocument,
  projectId: number,
  filters: FlagDocument['filters'],
): Record<string, unknown> {
  return {
    id: flag.id,
    team_id: projectId,
    name: flag.name ?? '',
    key: flag.key,
    filters,
    deleted: flag.deleted,
    active: flag.active,
    ensure_experience_continuity: flag.ensure_experience_continuity,
    has_encrypted_payloads: flag.has_encrypted_payloads ?? false,
    version: flag.version,
    evaluation_runtime: flag.evaluation_runtime ?? 'all',
    bucketing_identifier: bucketingIdentifierOf(flag),
    evaluation_tags: flag.evaluation_tags ?? flag.evaluation_contexts ?? [],
  }
}

/** Live cohorts reachable from the flags' cohort filters, nested cohorts included (a static one has none). */
export function cohortClosure(flags: FlagDocument[], cohorts: CohortDocument[]): CohortDefinition[] {
  const byId = new Map(cohorts.filter((c) => !c.deleted).map((c) => [c.id, toCohortDefinition(c)]))
  const queue: number[] = []
  for (const flag of flags) {
    for (const group of flag.filters.groups ?? []) {
      for (const filter of group?.properties ?? []) {
        const id = filter?.type === 'cohort' ? cohortIdOf(filter) : null
        if (id !== null) queue.push(id)
      }
    }
  }
  const seen = new Map<number, CohortDefinition>()
  while (queue.length > 0) {
    const cohort = byId.get(queue.pop() as number)
    if (!cohort || seen.has(cohort.id)) continue
    seen.set(cohort.id, cohort)
    try {
      queue.push(...cohortDependencies(cohort))
    } catch {
      // malformed filters: the cohort is sent as stored and fails in the SDK as it does here
    }
  }
  return [...seen.values()].sort((a, b) => a.id - b.id)
}

/** Dynamic, live cohorts reachable from the flags: what SDKs can evaluate locally. */
export function reachableCohorts(flags: FlagDocument[], cohorts: CohortDocument[]): CohortDefinition[] {
  return cohortClosure(flags, cohorts).filter((cohort) => !cohort.is_static)
}

export function toSdkDefinitions(
  projectId: number,
  flags: FlagDocument[],
  cohorts: CohortDocument[],
  groupTypeMapping: Record<string, string>,
): SdkDefinitions {
  const live = flags.filter((flag) => !flag.deleted)
  const chains = dependencyChains(live)
  const resolve = resolver(live)
  const cohortMap: Record<string, unknown> = {}
  for (const cohort of reachableCohorts(live, cohorts)) {
    cohortMap[String(cohort.id)] = isRecord(cohort.filters) ? cohort.filters.properties : undefined
  }
  return {
    flags: live.map((flag) => sdkFlag(flag, projectId, rewriteDependencies(flag, resolve, chains))),
    group_type_mapping: { ...groupTypeMapping },
    cohorts: cohortMap,
  }
}
