/**
 * Definition-time bound on costly regular expressions. A pattern the linear engine cannot run
 * (look-around, back-references) runs on the backtracking engine, and a crafted value can make
 * each match take the whole match limit (BACKTRACKING_MATCH_LIMIT_MS). A flag or cohort with more
 * such filters than fit in one request's budget (`regexBudgetMs`) could be made to fail on every
 * request, so it is refused when written, with a 400 naming the filter past the limit.
 */
import { httpError } from '../../../core/plugin-api.ts'
import { BACKTRACKING_MATCH_LIMIT_MS, needsBacktracking } from '../evaluator/index.ts'
import { toText } from '../evaluator/properties/values.ts'

/** Default of the decide option `regexBudgetMs`: ten filters at the match limit per request. */
export const DEFAULT_REGEX_BUDGET_MS = 100

/** Backtracking filters one flag (or cohort) may have: as many as can each take the match limit within the budget. */
export function backtrackingFiltersAllowed(regexBudgetMs: number): number {
  return Math.floor(regexBudgetMs / BACKTRACKING_MATCH_LIMIT_MS)
}

interface FoundFilter {
  /** Dotted path of the filter, from the definition's root. */
  path: string
  key: string
  /** Where it is, for the message: `condition set 3` or `property group cohorts.5.values.0`. */
  place: string
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function isBacktrackingFilter(filter: unknown): filter is Record<string, unknown> & { key: string } {
  if (!isRecord(filter) || typeof filter.key !== 'string') return false
  if (filter.operator !== 'regex' && filter.operator !== 'not_regex') return false
  if (filter.type === 'cohort' || filter.type === 'flag') return false
  if (filter.value === undefined || filter.value === null) return false
  return needsBacktracking(toText(filter.value))
}

/** The backtracking filters of a flag's condition sets (`groups`, then `super_groups`), in evaluation order. */
function flagBacktrackingFilters(filters: unknown, path: string): FoundFilter[] {
  const found: FoundFilter[] = []
  if (!isRecord(filters)) return found
  for (const list of ['groups', 'super_groups'] as const) {
    const conditions = filters[list]
    if (!Array.isArray(conditions)) continue
    conditions.forEach((condition, c) => {
      const properties = isRecord(condition) ? condition.properties : undefined
      if (!Array.isArray(properties)) return
      properties.forEach((filter, p) => {
        if (!isBacktrackingFilter(filter)) return
        const place = list === 'groups' ? `condition set ${c + 1}` : `super condition set ${c + 1}`
        found.push({ path: `${path}.${list}.${c}.properties.${p}`, key: filter.key, place })
      })
    })
  }
  return found
}

/** The backtracking leaves of a cohort's property group, depth first. */
function groupBacktrackingFilters(group: unknown, path: string, found: FoundFilter[] = []): FoundFilter[] {
  if (!isRecord(group) || !Array.isArray(group.values)) return found
  group.values.forEach((child, i) => {
    const at = `${path}.values.${i}`
    if (isRecord(child) && 'values' in child) groupBacktrackingFilters(child, at, found)
    else if (isBacktrackingFilter(child)) found.push({ path: at, key: child.key, place: `property group ${path}` })
  })
  return found
}

function refuseBeyond(found: FoundFilter[], regexBudgetMs: number, what: string): void {
  const allowed = backtrackingFiltersAllowed(regexBudgetMs)
  if (found.length <= allowed) return
  const first = found[allowed]
  throw httpError(
    'too_many_backtracking_regexes',
    `${first.path}: ${what}, ${first.place}, property "${first.key}": ${found.length} regular expressions need the backtracking engine ` +
      `(look-around or back-references), at most ${allowed} may: each can take ${BACKTRACKING_MATCH_LIMIT_MS} ms on a crafted value, ` +
      `and a request spends at most ${regexBudgetMs} ms (regexBudgetMs) on regular expressions. ` +
      'Rewrite some without look-around or back-references, or raise regexBudgetMs.',
    `${first.path}.value`,
  )
}

/** 400 when the flag's filters hold more backtracking regular expressions than fit in the budget. */
export function checkFlagRegexes(flagKey: string, filters: unknown, path: string, regexBudgetMs: number): void {
  refuseBeyond(flagBacktrackingFilters(filters, path), regexBudgetMs, `flag "${flagKey}"`)
}

/** 400 when the cohort's property group holds more backtracking regular expressions than fit in the budget. */
export function checkCohortRegexes(
  cohortLabel: string,
  properties: unknown,
  path: string,
  regexBudgetMs: number,
): void {
  refuseBeyond(groupBacktrackingFilters(properties, path), regexBudgetMs, cohortLabel)
}
