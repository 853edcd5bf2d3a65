import { indexCohorts, staticMembershipFor, type CohortIndex } from './cohorts.ts'
import type { RequestContext } from './context.ts'
import type { FlagLookup } from './dependencies.ts'
import { assignProperties, mergePersonProperties } from './person-properties.ts'
import { formatNumber } from './properties/values.ts'
import type { EvaluationInput, Properties } from './types.ts'

interface GroupKey {
  text: string
  usable: boolean
}

/**
 * The request's groups resolved through the group-type mapping (§5.1), each group type once per
 * request: flags of one group type share the key and the merged properties (read only).
 */
class GroupResolver {
  private readonly mapping: Readonly<Record<string, string>> | null
  private readonly stored: Record<number, Properties>
  private readonly keys = new Map<number, GroupKey>()
  private readonly properties = new Map<number, Properties>()

  constructor(private readonly input: EvaluationInput) {
    this.mapping = input.groupTypeMappingFailed ? null : (input.groupTypeMapping ?? null)
    this.stored = input.database.status === 'loaded' ? (input.database.groupProperties ?? {}) : {}
  }

  private typeName(index: number): string | undefined {
    return this.mapping?.[String(index)]
  }

  groupKey(index: number): GroupKey {
    let key = this.keys.get(index)
    if (key === undefined) this.keys.set(index, (key = this.resolveKey(index)))
    return key
  }

  private resolveKey(index: number): GroupKey {
    const name = this.typeName(index)
    const raw = name === undefined ? undefined : this.input.groups?.[name]
    if (typeof raw === 'string') return { text: raw, usable: raw !== '' }
    if (typeof raw === 'number') return { text: formatNumber(raw), usable: true }
    // Any other value hashes as "" (kept for parity with the older service), and is not usable.
    return { text: '', usable: false }
  }

  groupProperties(index: number): Properties {
    let merged = this.properties.get(index)
    if (merged === undefined) {
      const name = this.typeName(index)
      const overrides = name === undefined ? undefined : this.input.groupPropertyOverrides?.[name]
      this.properties.set(index, (merged = assignProperties(assignProperties({}, this.stored[index]), overrides)))
    }
    return merged
  }
}

/** Cohort definitions indexed once per definitions object (the cache keeps one per version). */
const cohortIndexes = new WeakMap<object, CohortIndex>()

/** Requests without cohort definitions share one empty index (so do its remembered orders, cohorts.ts). */
const NO_COHORTS = indexCohorts(undefined)

function cohortIndexOf(cohorts: EvaluationInput['cohorts']): CohortIndex {
  if (cohorts === null || typeof cohorts !== 'object') return NO_COHORTS
  let index = cohortIndexes.get(cohorts)
  if (index === undefined) cohortIndexes.set(cohorts, (index = indexCohorts(cohorts)))
  return index
}

/** The request's device id, else a non-empty `$device_id` among the person property overrides (§4.4). */
export function requestDeviceId(input: Pick<EvaluationInput, 'deviceId' | 'personPropertyOverrides'>): string | null {
  if (input.deviceId) return input.deviceId
  const fromProperties = input.personPropertyOverrides?.$device_id
  return typeof fromProperties === 'string' && fromProperties !== '' ? fromProperties : null
}

export function buildRequestContext(
  input: EvaluationInput,
  lookup: FlagLookup,
  distinctId: string,
  timeZone: string,
  nowMillis: number,
): RequestContext {
  const database = input.database
  const loaded = database.status === 'loaded'
  const person = mergePersonProperties(loaded ? database.person : undefined, input.personPropertyOverrides, distinctId)
  const budget = input.budget
  const match = {
    timeZone,
    nowMillis,
    regexBudget: budget ? { clock: budget.clock, remainingMs: budget.regexMs } : null,
  }
  let cohorts: RequestContext['cohorts'] = null
  if (loaded) {
    const index = cohortIndexOf(input.cohorts)
    const memberOf = database.person === null ? null : (database.staticCohortIds ?? [])
    cohorts = {
      cohorts: index,
      staticMembership: staticMembershipFor(index, memberOf),
      match,
      known: { person, members: new Map() },
    }
  }
  const groups = new GroupResolver(input)
  return {
    lookup,
    distinctId,
    deviceId: requestDeviceId(input),
    anonDistinctId: input.anonDistinctId ?? null,
    person,
    groupKey: (index) => groups.groupKey(index),
    groupProperties: (index) => groups.groupProperties(index),
    hashKeyOverrides: input.hashKeyOverrides ?? null,
    cohorts,
    match,
    results: new Map(),
  }
}
