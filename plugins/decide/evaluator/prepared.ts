import { compileFlag, type CompiledFlag } from './compiled-flag.ts'
import {
  directDependencies,
  lookupFlags,
  planDependencies,
  type DependencyPlan,
  type FlagLookup,
} from './dependencies.ts'
import { isFlagExcluded, type RequestFilters } from './filtering.ts'
import {
  databaseNeeds,
  flagNeedsHashKeyOverride,
  propertyNeeds,
  type DatabaseNeeds,
  type PropertyNeeds,
} from './requirements.ts'
import type { ReasonKind } from './reasons.ts'
import type { FlagMatch } from './flag.ts'
import type { FlagDefinition, FlagResult } from './types.ts'
import { sanitizeFlags } from './validate.ts'

/**
 * What the evaluator derives from a project's flag definitions alone: the checked flags, the
 * lookup by id and key, the dependency plan of all flags and each flag's storage needs. None of it
 * depends on the request, so a caller that serves many requests from the same definitions builds
 * it once (`prepareFlags`) and passes it with them; without it every request re-derives it
 * (copying and checking 50 flags and planning their dependencies twice per request was about a
 * tenth of a flags request's CPU).
 */
export interface PreparedFlags {
  /** The definitions this was built from: used only when the request's `flags` is this array. */
  readonly source: readonly FlagDefinition[]
  /** The definitions with malformed flags emptied (validate.ts). */
  readonly flags: readonly FlagDefinition[]
  readonly problems: ReadonlyMap<number, string>
  readonly lookup: FlagLookup
  /** The dependency plan of every flag (requests without `flag_keys`). */
  readonly fullPlan: DependencyPlan
  /** Keys of the live flags with experience continuity (the hash-key overrides written for them). */
  readonly continuityKeys: readonly string[]
  /** The flag's property needs (requirements.ts), computed on first use. */
  needs(flag: FlagDefinition): PropertyNeeds
  /** What decides whether the flag reads the database (requirements.ts), computed on first use. */
  databaseNeeds(flag: FlagDefinition): DatabaseNeeds
  /** The flag's answers made so far with these definitions, for evaluate.ts to share (it adds to the list). */
  outcomes(flag: FlagDefinition): SharedAnswer[]
  /** The shared answer of a compiled flag's shared (frozen) match, by identity: evaluate.ts fills it (a Map: the matches live as long as this). */
  readonly answers: Map<FlagMatch, FlagResult>
  /** The flag compiled (compiled-flag.ts), on first use. */
  compiled(flag: FlagDefinition): CompiledFlag
  /** What every flag compiled to, for the debug listing. */
  listing(): string
  /** The flags a request evaluates and skips (remembered for requests without `flag_keys`). */
  selection(keys: readonly string[] | null, filters: RequestFilters): Selection
}

/** An answer shared by the requests with its outcome, with the reason kind it was made for (two kinds share a code). */
export interface SharedAnswer {
  readonly answer: FlagResult
  readonly kind: ReasonKind
}

/** Which flags one request evaluates: what evaluate.ts and plan.ts both start from. */
export interface Selection {
  readonly plan: DependencyPlan
  /** The plan's flags, dependencies first, without the excluded ones. */
  readonly evaluable: readonly FlagDefinition[]
  /** Every excluded flag of the project (they count as `false` for flags depending on them). */
  readonly excludedIds: readonly number[]
  /** Whether any evaluable flag's answer can depend on a stored hash-key override. */
  readonly needsHashKeyOverride: boolean
  /**
   * Per evaluable flag (same index): whether another flag's condition reads its value, so that
   * evaluate.ts records only those values in the request context.
   */
  readonly readByOthers: readonly boolean[]
  /** Per evaluable flag (same index): the flag compiled, filled on first use by evaluate.ts. */
  readonly compiled: (CompiledFlag | undefined)[]
  /**
   * Whether a record of the evaluable flags' answers by key enumerates them in evaluation order:
   * their keys are distinct and none is an array index (which a record lists first, ascending).
   */
  readonly keysInOrder: boolean
}

/** An ECMAScript array index: the canonical text of an integer below 2³² − 1. */
function isArrayIndex(key: string): boolean {
  const n = Number(key)
  return n >>> 0 === n && n !== 4294967295 && String(n) === key
}

function keysInOrder(evaluable: readonly FlagDefinition[]): boolean {
  const keys = new Set<string>()
  for (const { key } of evaluable) {
    if (keys.has(key) || isArrayIndex(key)) return false
    keys.add(key)
  }
  return true
}

/** Distinct request filters remembered per definitions version; others are computed per request. */
const MAX_SELECTIONS = 64

function select(
  flags: readonly FlagDefinition[],
  plan: DependencyPlan,
  filters: RequestFilters,
  targets: ReadonlySet<number>,
): Selection {
  const excludedIds: number[] = []
  for (const flag of flags) if (isFlagExcluded(flag, filters)) excludedIds.push(flag.id)
  const excluded = new Set(excludedIds)
  const evaluable: FlagDefinition[] = []
  for (const stage of plan.stages) for (const flag of stage) if (!excluded.has(flag.id)) evaluable.push(flag)
  return {
    plan,
    evaluable,
    excludedIds,
    needsHashKeyOverride: evaluable.some(flagNeedsHashKeyOverride),
    readByOthers: evaluable.map((flag) => targets.has(flag.id)),
    compiled: [],
    keysInOrder: keysInOrder(evaluable),
  }
}

function selectionKey(filters: RequestFilters): string {
  const contexts = filters.evaluationContexts
  return `${filters.runtime ?? null}|${Boolean(filters.onlySurveyFlags)}|${contexts && contexts.length > 0 ? JSON.stringify(contexts) : ''}`
}

export function prepareFlags(source: readonly FlagDefinition[]): PreparedFlags {
  const { flags, problems } = sanitizeFlags(source)
  const lookup = lookupFlags(flags)
  const fullPlan = planDependencies(flags, null, lookup)
  // the flags some flag depends on, whichever flags a request selects
  const targets = new Set<number>()
  for (const flag of flags)
    for (const target of directDependencies(flag, lookup)) if (target !== 'missing') targets.add(target)
  const needs = new Map<FlagDefinition, PropertyNeeds>()
  const database = new Map<FlagDefinition, DatabaseNeeds>()
  const selections = new Map<string, Selection>()
  const outcomes = new Map<FlagDefinition, SharedAnswer[]>()
  const compiled = new Map<FlagDefinition, CompiledFlag>()
  const compiledFlag = (flag: FlagDefinition) => {
    let found = compiled.get(flag)
    if (!found) compiled.set(flag, (found = compileFlag(flag, lookup)))
    return found
  }
  return {
    source,
    flags,
    problems,
    lookup,
    fullPlan,
    continuityKeys: flags.filter((f) => f.active && !f.deleted && f.ensure_experience_continuity).map((f) => f.key),
    needs(flag) {
      let found = needs.get(flag)
      if (!found) needs.set(flag, (found = propertyNeeds(flag)))
      return found
    },
    databaseNeeds(flag) {
      let found = database.get(flag)
      if (!found) database.set(flag, (found = databaseNeeds(flag)))
      return found
    },
    answers: new Map(),
    compiled: compiledFlag,
    listing: () => flags.map((flag) => compiledFlag(flag).listing).join('\n'),
    outcomes(flag) {
      let found = outcomes.get(flag)
      if (!found) outcomes.set(flag, (found = []))
      return found
    },
    selection(keys, filters) {
      if (keys !== null) return select(flags, planDependencies(flags, keys, lookup), filters, targets)
      const key = selectionKey(filters)
      let found = selections.get(key)
      if (!found) {
        found = select(flags, fullPlan, filters, targets)
        if (selections.size < MAX_SELECTIONS) selections.set(key, found)
      }
      return found
    },
  }
}

/** The prepared definitions when they were built from `flags`, else prepared now. */
export function preparedFor(
  flags: readonly FlagDefinition[],
  prepared: PreparedFlags | null | undefined,
): PreparedFlags {
  return prepared && prepared.source === flags ? prepared : prepareFlags(flags)
}
